# mk/hardening.mk: the fuzz target and the peer suite.
#   make fuzz          build the libFuzzer target and run it FUZZ_SECONDS (600)
#   make fuzz-build    only build it ($(BUILD)/fuzz/fuzz_shim)
#   make check-peer    CPython's test_socket with and without the shim
# `make test` builds the fuzz target when clang is there; tests/integration/
# fuzz.sh runs it for 20 s.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SAN     := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -D_GNU_SOURCE -DSOCKAUDIT_VERSION_STR=\"$(VERSION)\" -Iinclude -Icommon -Ishim \
		$(JANSSON_CFLAGS) -g -O1 -Wall $(FUZZ_SAN)
FUZZ_SRC     := $(filter-out shim/core/interpose%.c shim/base/link.c %.S,$(SHIM_SRC))
FUZZ_OBJ     := $(patsubst shim/%.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRC))
FUZZ_BIN     := $(BUILD)/fuzz/fuzz_shim
HAVE_FUZZ_CC := $(shell command -v $(FUZZ_CC) 2>/dev/null)

.PHONY: fuzz fuzz-build check-peer

$(BUILD)/fuzz/obj/%.o: shim/%.c $(wildcard shim/*/*.h common/*.h) include/sockaudit.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BIN): tests/fuzz/fuzz_shim.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(JANSSON_LIBS) -ldl -lpthread -lm

fuzz-build: $(FUZZ_BIN)

ifneq ($(HAVE_FUZZ_CC),)
test-extra:: $(FUZZ_BIN)
endif

fuzz:
	@scripts/ensure-deps.sh fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crashes
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crashes/ \
		$(BUILD)/fuzz/corpus tests/fuzz/seeds

check-peer: all
	@scripts/ensure-deps.sh test
	@tests/integration/peer_python.sh

# Socket calls from signal handlers at every level: the host must run
# unchanged, since calls made inside a handler go straight to libc
# (docs/hardening.md, "Signals").
.PHONY: check-signals
check-signals: all $(BUILD)/progs/sighandler
	@tests/hardening/signals_levels.sh
