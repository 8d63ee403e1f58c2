# bloomgate build. `make` builds build/bloomgate; `make test` installs what
# is missing, builds and runs every suite; `make demo`; `make bench`.
.DELETE_ON_ERROR:
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
LDLIBS   := -lxdp -lbpf -lelf -lz -lm
BPF_CFLAGS := -O2 -g -target bpf $(WARN) -Iinclude -Ibpf -I$(ARCH_INC) \
	      -Wno-unused-function

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

LIB_SRCS := user/lists.c user/filter.c user/state.c user/domains.c
LIB_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LIB_SRCS))
BPF_OBJ  := $(BUILD)/bloomgate.bpf.o
SKEL     := $(BUILD)/bloomgate.skel.h
HEADERS  := $(wildcard include/bloomgate/*.h user/*.h bpf/*.h)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
BPFT_SRCS := $(wildcard tests/bpf/test_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/%,$(BPFT_SRCS))
TEST_HEADERS := $(wildcard tests/*.h)
TEST_HELPERS := $(patsubst tests/tools/%.c,$(BUILD)/tests/%,$(wildcard tests/tools/*.c))

BENCH_BPF := $(BUILD)/bench.bpf.o
BENCH_SKEL := $(BUILD)/bench.skel.h

.PHONY: all deps test unit bpftest e2e demo bench clean
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

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf.o,,$(notdir $<)) > $@

$(BUILD)/user/%.o: user/%.c $(HEADERS) $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libbloomgate.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)ar rcs $@ $^

$(BUILD)/bloomgate: $(BUILD)/user/cli.o $(BUILD)/libbloomgate.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Tests are built with the sanitizers.
TEST_CFLAGS := $(CFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer
$(BUILD)/tests/test_%: tests/unit/test_%.c $(TEST_HEADERS) $(LIB_SRCS) $(HEADERS) $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests $< $(LIB_SRCS) $(LDLIBS) -lcmocka -lxxhash -o $@

$(BUILD)/tests/test_%: tests/bpf/test_%.c $(TEST_HEADERS) $(LIB_SRCS) $(HEADERS) $(SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests $< $(LIB_SRCS) $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/%: tests/tools/%.c $(HEADERS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests $< -o $@

$(BUILD)/bench: bench/bench.c tests/pktgen.h $(BENCH_SKEL) $(SKEL) $(BUILD)/libbloomgate.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $< $(BUILD)/libbloomgate.a $(LDLIBS) -o $@

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(BPFT_BINS) $(TEST_HELPERS)
	$(Q)./tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_HELPERS)
	$(Q)./scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BUILD)/bench
	$(Q)./bench/run.sh

clean:
	rm -rf $(BUILD)
