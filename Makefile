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
CFLAGS   += $(WARN) -std=gnu11 -Iinclude -Iuser -I$(BUILD) -I/usr/include/postgresql -D_GNU_SOURCE
# The core links without libbpf and libxdp; the kernel part needs them.
# fetch.c: libcurl for URLs, libcrypto for SHA-256 of a copy.
CORE_LDLIBS := -lpthread -ljson-c -lyaml -lm -lmicrohttpd -lcurl -lcrypto -lsqlite3 -lpq
KERN_LDLIBS := -lxdp -lbpf -lelf -lz -lsystemd -lpthread
LDLIBS   := $(KERN_LDLIBS) $(CORE_LDLIBS)
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 $(WARN) -Iinclude -Ibpf -I$(ARCH_INC) \
	      -Wno-unused-function
# BPF_EXTRA_CFLAGS: added by a caller (the package build: the source
# path mapped out of the BTF the binary embeds, for a reproducible build)
BPF_CFLAGS += $(BPF_EXTRA_CFLAGS)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# user/ by layer (docs/ARCHITECTURE.md), one library each, bottom up:
# core (lists, sources, plan and build in memory, probe, explain, record,
# option tables, reports as text; no libbpf), kern (pins and lock, attach,
# swap, the load pipeline's publishing half: libbpf, libxdp), agent (the
# agent: config, fetch, store, metrics, its event loop) and the CLI on top.
# No file includes one of a layer above it (tests/e2e/test_layers.sh).
CORE_SRCS  := $(sort $(wildcard user/core/*.c))
KERN_SRCS  := $(sort $(wildcard user/kern/*.c))
AGENT_SRCS := $(sort $(wildcard user/agent/*.c))
CLI_SRCS   := $(sort $(wildcard user/cli/*.c))
objs = $(patsubst user/%.c,$(1)/user/%.o,$(2))
CORE_LIB  := $(BUILD)/libbloomgate-core.a
KERN_LIB  := $(BUILD)/libbloomgate-kern.a
AGENT_LIB := $(BUILD)/libbloomgate-agent.a
# link order: the upper layers first
LIBS := $(AGENT_LIB) $(KERN_LIB) $(CORE_LIB)
BPF_OBJ  := $(BUILD)/bloomgate.bpf.o
SKEL     := $(BUILD)/bloomgate.skel.h
# Every object depends on the headers it includes (-MMD: the compiler
# writes them to a .d file beside the object; -MP: a deleted header is no
# error), the BPF objects and test binaries too.
DEPFLAGS := -MMD -MP
# the same for a binary compiled and linked from one source in one step
BINDEP = -MMD -MP -MF $(@D)/.$(@F).d -MT $@
HEADERS  := $(wildcard include/bloomgate/*.h bpf/*.h)

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

.PHONY: all deps test unit bpftest e2e demo demo-agent bench install clean fuzz tsan man \
	deb test-package
all: $(BUILD)/bloomgate man

# The manual pages and the bash completion, written by the binary from the
# tables it parses with (user/cli/docs.c): they cannot disagree with it
# (tests/e2e/test_docs.sh checks).
MAN_PAGES  := $(BUILD)/man/bloomgate.8 $(BUILD)/man/bloomgate.yaml.5
COMPLETION := $(BUILD)/completion/bloomgate
man: $(MAN_PAGES) $(COMPLETION)
$(BUILD)/man/bloomgate.8: $(BUILD)/bloomgate
	$(call msg,MAN,$@)
	@mkdir -p $(@D)
	$(Q)$< help --man 8 >$@
$(BUILD)/man/bloomgate.yaml.5: $(BUILD)/bloomgate
	$(call msg,MAN,$@)
	@mkdir -p $(@D)
	$(Q)$< help --man 5 >$@
$(COMPLETION): $(BUILD)/bloomgate
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$< help --completion bash >$@

deps:
	$(Q)./scripts/install-deps.sh

$(BUILD)/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/bench.bpf.o: bench/bench.bpf.c
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/livegen.bpf.o: bench/livegen.bpf.c
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf.o,,$(notdir $<)) > $@

# The skeleton is made before any userspace object (order only: the .d
# files say which objects include it).
$(BUILD)/user/%.o: user/%.c | $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(CORE_LIB): $(call objs,$(BUILD),$(CORE_SRCS))
$(KERN_LIB): $(call objs,$(BUILD),$(KERN_SRCS))
$(AGENT_LIB): $(call objs,$(BUILD),$(AGENT_SRCS))
$(BUILD)/%.a:
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/bloomgate: $(call objs,$(BUILD),$(CLI_SRCS)) $(LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Tests are built with the sanitizers: the libraries once more, into
# $(ASAN) (each source compiled once, not once per test), and each test
# binary from its own file linked against them.
ASAN := $(BUILD)/asan
TEST_CFLAGS := $(CFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer
ASAN_LIBS := $(ASAN)/libbloomgate-agent.a $(ASAN)/libbloomgate-kern.a \
	     $(ASAN)/libbloomgate-core.a
$(ASAN)/user/%.o: user/%.c | $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(ASAN)/libbloomgate-core.a: $(call objs,$(ASAN),$(CORE_SRCS))
$(ASAN)/libbloomgate-kern.a: $(call objs,$(ASAN),$(KERN_SRCS))
$(ASAN)/libbloomgate-agent.a: $(call objs,$(ASAN),$(AGENT_SRCS))

# ThreadSanitizer: the whole bloomgate once more, into $(TSAN), for the
# agent's threads (the loop, its workers, the metrics server). `make tsan`
# builds it and runs the agent's end-to-end tests with it
# (tests/tsan.sh): any race reported fails the run.
TSAN := $(BUILD)/tsan
TSAN_CFLAGS := $(CFLAGS) -O1 -fsanitize=thread -fno-omit-frame-pointer
TSAN_LIBS := $(TSAN)/libbloomgate-agent.a $(TSAN)/libbloomgate-kern.a \
	     $(TSAN)/libbloomgate-core.a
$(TSAN)/user/%.o: user/%.c | $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TSAN_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(TSAN)/libbloomgate-core.a: $(call objs,$(TSAN),$(CORE_SRCS))
$(TSAN)/libbloomgate-kern.a: $(call objs,$(TSAN),$(KERN_SRCS))
$(TSAN)/libbloomgate-agent.a: $(call objs,$(TSAN),$(AGENT_SRCS))
$(TSAN)/bloomgate: $(call objs,$(TSAN),$(CLI_SRCS)) $(TSAN_LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(TSAN_CFLAGS) $^ $(LDLIBS) -o $@

tsan: deps
	$(Q)$(MAKE) --no-print-directory all $(TSAN)/bloomgate $(TEST_HELPERS)
	$(Q)./tests/tsan.sh

# Unit tests link the core and the agent's parts without libbpf: a core
# function that came to need the kernel layer would fail to link here
# (static archives: only the objects a test uses are linked). test_abi is
# the exception: it compares abi.h with the BTF of the BPF object (libbpf).
UNIT_LIBBPF := abi
# clang: libFuzzer and its sanitizers, over the core parsers and what
# they call (no libbpf), compiled once into their own archive; -Itests for
# the test headers a target checks (dns_ref.h: the DNS query parser's
# reference)
FUZZ_LIB_SRCS := user/core/io.c user/core/ip.c user/core/format.c \
		 user/core/wire.c user/core/lists.c user/core/domains.c \
		 user/core/sources.c user/core/par.c user/core/grow.c \
		 user/agent/csstream.c
# the decision stream's parser reads each element with json-c
FUZZ_LDLIBS := -ljson-c
FUZZ_LIB := $(BUILD)/fuzz/libbloomgate-fuzz.a
$(BUILD)/fuzz/user/%.o: user/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(FUZZ_LIB): $(call objs,$(BUILD)/fuzz,$(FUZZ_LIB_SRCS))
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(BINDEP) $< $(FUZZ_LIB) $(FUZZ_LDLIBS) -o $@

$(BUILD)/tests/test_%: tests/unit/test_%.c $(ASAN_LIBS) | $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(BINDEP) -Itests $< $(ASAN_LIBS) \
		$(if $(filter $*,$(UNIT_LIBBPF)),$(KERN_LDLIBS)) $(CORE_LDLIBS) \
		-lcmocka -lxxhash -o $@

$(BUILD)/tests/test_%: tests/bpf/test_%.c $(ASAN_LIBS) | $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(BINDEP) -Itests $< $(ASAN_LIBS) $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/%: tests/tools/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(BINDEP) -Itests $< $(TOOL_LDLIBS) -o $@

# A tool's own libraries (none for most). The test HTTP server: libmicrohttpd,
# zlib for gzip, libcrypto for its ETags; test_fetch runs it.
$(BUILD)/tests/httpd: TOOL_LDLIBS := -lmicrohttpd -lz -lcrypto
# The artifact forger (tests/artforge.h): the core's digests.
$(BUILD)/tests/artforge: $(CORE_LIB)
$(BUILD)/tests/artforge: TOOL_LDLIBS := $(CORE_LIB) $(CORE_LDLIBS)
$(BUILD)/tests/test_fetch: | $(BUILD)/tests/httpd
$(BUILD)/tests/test_crowdsec: | $(BUILD)/tests/httpd

# several sources in one step: their headers listed instead
$(BUILD)/bench: $(BENCH_SRCS) $(BENCH_HDRS) tests/pktgen.h $(wildcard user/*/*.h) \
		$(HEADERS) $(BENCH_SKEL) $(SKEL) $(LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(BENCH_SRCS) $(LIBS) $(LDLIBS) -o $@

$(LIVEGEN): bench/livegen.c $(BUILD)/livegen.skel.h
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(BINDEP) $< -lbpf -lelf -lz -o $@

$(SCALE_TOOLS): $(BUILD)/%: bench/%.c
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -lpthread -o $@

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(BPFT_BINS) $(TEST_HELPERS) $(FUZZ_BINS)
	$(Q)$(MAKE) --no-print-directory deb
	$(Q)BG_DEB=$(DEB_FILE) ./tests/run.sh

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
	$(Q)$(MAKE) --no-print-directory all $(BUILD)/bench $(BUILD)/tests/httpd $(BUILD)/tests/ctlhold $(LIVEGEN) $(SCALE_TOOLS)
	$(Q)./bench/run.sh

# make install [DESTDIR=...] [PREFIX=/usr/local]: the binary, the agent's
# systemd unit, the group bloomgate (sysusers.d; made at once without
# DESTDIR), an example config (kept when one is there), the README, the
# manual pages and the bash completion. The unit names the binary and the
# README under PREFIX: etc/ says /usr/local (the default), rewritten for
# another PREFIX (the package: /usr).
PREFIX  ?= /usr/local
UNITDIR ?= /etc/systemd/system
SYSUSERSDIR ?= /etc/sysusers.d
install: all
	install -D -m 0755 $(BUILD)/bloomgate $(DESTDIR)$(PREFIX)/sbin/bloomgate
	install -d -m 0755 $(DESTDIR)$(UNITDIR)
	sed 's#/usr/local/#$(PREFIX)/#g' etc/bloomgate-agent.service \
		>$(DESTDIR)$(UNITDIR)/bloomgate-agent.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/bloomgate-agent.service
	install -D -m 0644 etc/bloomgate.sysusers $(DESTDIR)$(SYSUSERSDIR)/bloomgate.conf
	[ -n "$(DESTDIR)" ] || systemd-sysusers $(SYSUSERSDIR)/bloomgate.conf
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/bloomgate/README.md
	install -D -m 0644 $(BUILD)/man/bloomgate.8 $(DESTDIR)$(PREFIX)/share/man/man8/bloomgate.8
	install -D -m 0644 $(BUILD)/man/bloomgate.yaml.5 $(DESTDIR)$(PREFIX)/share/man/man5/bloomgate.yaml.5
	install -D -m 0644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/bloomgate
	install -d -m 0755 $(DESTDIR)/etc/bloomgate
	[ -e $(DESTDIR)/etc/bloomgate/bloomgate.yaml ] || \
		install -m 0644 etc/bloomgate.yaml $(DESTDIR)/etc/bloomgate/bloomgate.yaml

# make deb: build/bloomgate_VERSION_amd64.deb (debian/; VERSION is
# BG_VERSION, which debian/changelog must match: debian/rules checks).
# dpkg-buildpackage runs in a copy of the tree, build/deb/bloomgate-VERSION
# (the files git tracks or would, committed or not): it writes its results
# to the parent directory, which for this tree is shared with others, and
# its clean step removes build/. Its own build/ inside the copy is built
# from scratch with dpkg-buildflags' hardening flags.
DEB_VERSION := $(shell sed -n 's/^.define BG_VERSION "\(.*\)"$$/\1/p' user/core/version.h)
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null)
DEB_FILE    := $(BUILD)/bloomgate_$(DEB_VERSION)_$(DEB_ARCH).deb
deb: deps
	$(Q)rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/bloomgate-$(DEB_VERSION)
	$(Q)git ls-files -z --cached --others --exclude-standard | \
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null | \
		tar -C $(BUILD)/deb/bloomgate-$(DEB_VERSION) -xf -
	$(Q)cd $(BUILD)/deb/bloomgate-$(DEB_VERSION) && \
		dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; echo "make deb: dpkg-buildpackage failed (log: $(BUILD)/deb/build.log)" >&2; exit 1; }
	$(Q)cp $(BUILD)/deb/bloomgate_$(DEB_VERSION)_$(DEB_ARCH).deb $(DEB_FILE)
	@echo "  DEB      $(DEB_FILE)"

# make test-package: the package installed, checked and purged in an
# overlay of a minimal Debian 12 (tests/package/test_package.sh; as root,
# with Debian's mirror reachable). `make test` runs it too (tests/run.sh).
test-package: deps deb
	$(Q)./tests/package/test_package.sh $(DEB_FILE)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -path $(BUILD)/deb -prune -o -type f -name '*.d' -print 2>/dev/null)
