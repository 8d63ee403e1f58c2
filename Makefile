# bloomgate build. `make` builds build/bloomgate; `make test` installs what
# is missing, builds and runs every suite; `make demo`; `make bench`.
.DELETE_ON_ERROR:
.DEFAULT_GOAL := all
.SUFFIXES:
.SECONDARY:

BUILD   := build
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
# 2>/dev/null: `make test` on a system without a compiler yet parses this
# before its deps step installs one (the sub-make that builds parses again).
ARCH_INC := /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += $(WARN) -std=gnu11 -Iinclude -Iuser -I$(BUILD) -D_GNU_SOURCE
# The core links without libbpf and libxdp; the kernel part needs them.
# fetch.c: libcurl for URLs, libcrypto for SHA-256 of a copy.
CORE_LDLIBS := -ljson-c -lyaml -lm -lmicrohttpd -lcurl -lcrypto -lsqlite3
KERN_LDLIBS := -lxdp -lbpf -lelf -lz -lsystemd -lpthread
LDLIBS   := $(KERN_LDLIBS) $(CORE_LDLIBS)
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 $(WARN) -Iinclude -Ibpf -I$(ARCH_INC) \
	      -Wno-unused-function

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Two libraries (docs/ARCHITECTURE.md). core: reading and parsing lists,
# planning and building a filter in memory, the load pipeline's pure half,
# explaining a verdict, the load record, the CLI's option tables, the
# agent's /metrics (libmicrohttpd); no libbpf. kernel: pins and lock,
# attach, the filter swap, the load pipeline's publishing half (libbpf,
# libxdp).
CORE_SRCS := user/io.c user/ip.c user/format.c user/wire.c user/lists.c \
	     user/domains.c user/sources.c user/filter.c user/probe.c \
	     user/prepare.c user/explain.c user/record.c user/counters.c \
	     user/print.c user/opts.c user/attach_opts.c user/metrics.c \
	     user/config.c user/fetch.c user/store.c
KERN_SRCS := user/pins.c user/attach.c user/swap.c user/load.c user/agent.c
LIB_SRCS := $(CORE_SRCS) $(KERN_SRCS)
CORE_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(CORE_SRCS))
KERN_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(KERN_SRCS))
BPF_OBJ  := $(BUILD)/bloomgate.bpf.o
SKEL     := $(BUILD)/bloomgate.skel.h
HEADERS  := $(wildcard include/bloomgate/*.h user/*.h bpf/*.h)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined \
	       -fno-sanitize-recover=undefined $(WARN) -std=gnu11 -Iinclude \
	       -Iuser -Itests -D_GNU_SOURCE
BPFT_SRCS := $(wildcard tests/bpf/test_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/%,$(BPFT_SRCS))
TEST_HEADERS := $(wildcard tests/*.h)
TEST_HELPERS := $(patsubst tests/tools/%.c,$(BUILD)/tests/%,$(wildcard tests/tools/*.c))

BENCH_BPF := $(BUILD)/bench.bpf.o
BENCH_SKEL := $(BUILD)/bench.skel.h
# bench/main.c and one file per section; bench.h is shared with the BPF side
BENCH_SRCS := $(filter-out %.bpf.c bench/livegen.c bench/genaddrs.c bench/ctlprobe.c,$(wildcard bench/*.c))
BENCH_HDRS := $(wildcard bench/*.h)
$(BENCH_BPF): bench/bench.h
# the end-to-end section's live-frames generator (bench/e2e.sh), a tool of its own
LIVEGEN := $(BUILD)/livegen
# the scale section's (bench/scale.sh) list generator and control-socket probe
SCALE_TOOLS := $(BUILD)/genaddrs $(BUILD)/ctlprobe

.PHONY: all deps test unit bpftest e2e demo demo-agent bench install clean fuzz
all: $(BUILD)/bloomgate

deps:
	$(Q)./scripts/install-deps.sh

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(HEADERS)
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench.bpf.o: bench/bench.bpf.c $(HEADERS)
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/livegen.bpf.o: bench/livegen.bpf.c bench/livegen.h $(HEADERS)
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf.o,,$(notdir $<)) > $@

$(BUILD)/user/%.o: user/%.c $(HEADERS) $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libbloomgate-core.a: $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libbloomgate.a: $(KERN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/bloomgate: $(BUILD)/user/cli.o $(BUILD)/libbloomgate.a $(BUILD)/libbloomgate-core.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Tests are built with the sanitizers.
TEST_CFLAGS := $(CFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer
# Unit tests link the core alone, without libbpf: a core function that
# came to need the kernel part would fail to link here. test_abi is the
# exception: it compares abi.h with the BTF of the BPF object (libbpf).
UNIT_LIBBPF := abi
# clang: libFuzzer and its sanitizers, over the core sources themselves
# (the parsers and what they call; no libbpf); -Itests for the test
# headers a target checks (dns_ref.h: the DNS query parser's reference)
FUZZ_LIB := user/io.c user/ip.c user/format.c user/wire.c user/lists.c \
	    user/domains.c user/sources.c
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB) $(HEADERS) $(TEST_HEADERS)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_LIB) -o $@

$(BUILD)/tests/test_%: tests/unit/test_%.c $(TEST_HEADERS) $(CORE_SRCS) $(HEADERS) $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests $< $(CORE_SRCS) \
		$(if $(filter $*,$(UNIT_LIBBPF)),$(KERN_LDLIBS)) $(CORE_LDLIBS) \
		-lcmocka -lxxhash -o $@

$(BUILD)/tests/test_%: tests/bpf/test_%.c $(TEST_HEADERS) $(LIB_SRCS) $(HEADERS) $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests $< $(LIB_SRCS) $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/%: tests/tools/%.c $(HEADERS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests $< $(TOOL_LDLIBS) -o $@

# A tool's own libraries (none for most). The test HTTP server: libmicrohttpd,
# zlib for gzip, libcrypto for its ETags; test_fetch runs it.
$(BUILD)/tests/httpd: TOOL_LDLIBS := -lmicrohttpd -lz -lcrypto
$(BUILD)/tests/test_fetch: | $(BUILD)/tests/httpd

$(BUILD)/bench: $(BENCH_SRCS) $(BENCH_HDRS) tests/pktgen.h $(BENCH_SKEL) $(SKEL) $(BUILD)/libbloomgate.a $(BUILD)/libbloomgate-core.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(BENCH_SRCS) $(BUILD)/libbloomgate.a $(BUILD)/libbloomgate-core.a $(LDLIBS) -o $@

$(LIVEGEN): bench/livegen.c bench/livegen.h $(BUILD)/livegen.skel.h
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $< -lbpf -lelf -lz -o $@

$(SCALE_TOOLS): $(BUILD)/%: bench/%.c
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -lpthread -o $@

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(BPFT_BINS) $(TEST_HELPERS) $(FUZZ_BINS)
	$(Q)./tests/run.sh

# libFuzzer targets (tests/fuzz/): `make test` runs each for FUZZ_SECONDS
# (tests/run.sh, default 15) on its committed corpus; `make fuzz` longer.
FUZZ_SECONDS ?= 600
fuzz: deps
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) ./tests/fuzz/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_HELPERS)
	$(Q)./scripts/demo.sh

demo-agent: deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_HELPERS)
	$(Q)./scripts/demo-agent.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BUILD)/bench $(BUILD)/tests/httpd $(LIVEGEN) $(SCALE_TOOLS)
	$(Q)./bench/run.sh

# make install [DESTDIR=...] [PREFIX=/usr/local]: the binary, the agent's
# systemd unit, an example config (kept when one is there), the README.
PREFIX  ?= /usr/local
UNITDIR ?= /etc/systemd/system
install: all
	install -D -m 0755 $(BUILD)/bloomgate $(DESTDIR)$(PREFIX)/sbin/bloomgate
	install -D -m 0644 etc/bloomgate-agent.service $(DESTDIR)$(UNITDIR)/bloomgate-agent.service
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/bloomgate/README.md
	install -d -m 0755 $(DESTDIR)/etc/bloomgate
	[ -e $(DESTDIR)/etc/bloomgate/bloomgate.yaml ] || \
		install -m 0644 etc/bloomgate.yaml $(DESTDIR)/etc/bloomgate/bloomgate.yaml

clean:
	rm -rf $(BUILD)
