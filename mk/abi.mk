# mk/abi.mk: where the built files can run.
#   make check-abi   libsockaudit.so and the sockaudit launcher need no glibc
#                    symbol version above GLIBC_2.17 (and no GLIBC_PRIVATE);
#                    libsockaudit-musl.so, when built, needs nothing musl's
#                    libc.so lacks. Part of `make test` (tests/integration/abi.sh).
ABI_FLOOR ?= 2.17
MUSL_LIBC ?= /usr/lib/x86_64-linux-musl/libc.so

.PHONY: check-abi
check-abi: all
	@rc=0; scripts/check-abi.sh --floor $(ABI_FLOOR) libsockaudit.so sockaudit || rc=1; \
	for m in libsockaudit-musl.so libsockaudit-musl-attach.so; do \
		if [ -f $$m ]; then scripts/check-abi.sh --musl $(MUSL_LIBC) $$m || rc=1; fi; \
	done; \
	exit $$rc

# make musl: libsockaudit-musl.so, the library for programs linked with musl
# (Alpine), next to libsockaudit.so. Built with musl-gcc (Debian's
# musl-tools) against a jansson built for musl from Debian's jansson source
# package (scripts/musl-jansson.sh, cached in $(BUILD)/musl/jansson). musl's
# include path has no kernel headers: $(BUILD)/musl/kinc offers the
# kernel's uapi linux/, asm/ and asm-generic/ (libc-independent) after
# musl's own; what musl's headers lack beyond those is copied in the code.
# Never -D_FORTIFY_SOURCE: musl has no __*_chk functions.
MUSL_CC      ?= musl-gcc
MUSL_BUILD   := $(BUILD)/musl
MUSL_JANSSON := $(MUSL_BUILD)/jansson
MUSL_KINC    := $(MUSL_BUILD)/kinc
MUSL_USER_CFLAGS := $(filter-out -D_FORTIFY_SOURCE% -Wp$(comma)-D_FORTIFY_SOURCE%,$(CFLAGS))
# A packager's LDFLAGS reach the musl library as they reach the glibc one
# (before SHIM_BINDING, which must win over their -z relro or -z now), but
# not SANITIZE's flags: musl has no sanitizer runtime.
MUSL_USER_LDFLAGS := $(LDFLAGS)
MUSL_CFLAGS  := -std=gnu11 -fPIC -D_GNU_SOURCE -DSOCKAUDIT_VERSION_STR=\"$(VERSION)\" -Iinclude -Icommon -Ishim \
		-I$(MUSL_JANSSON)/include -idirafter $(MUSL_KINC) $(WARN) -fvisibility=hidden -ffunction-sections \
		-DSA_JANSSON_OWN $(MUSL_USER_CFLAGS)
MUSL_OBJ     := $(patsubst shim/%.S,$(MUSL_BUILD)/obj/%.o,$(patsubst shim/%.c,$(MUSL_BUILD)/obj/%.o,$(SHIM_SRC)))
# The test programs the musl test runs under libsockaudit-musl.so.
MUSL_PROGS   := acc_server acc_client connect_probe sockhost threads life_vfork
MUSL_PROG_BIN := $(patsubst %,$(MUSL_BUILD)/progs/%,$(MUSL_PROGS))

.PHONY: musl musl-progs
musl: libsockaudit-musl.so libsockaudit-musl-attach.so

$(MUSL_JANSSON)/lib/libjansson.a:
	@scripts/ensure-deps.sh musl
	MUSL_CC=$(MUSL_CC) scripts/musl-jansson.sh $(MUSL_JANSSON)

$(MUSL_KINC)/.stamp:
	@mkdir -p $(MUSL_KINC)
	@inc=$$(echo | $(CC) -E -Wp,-v -x c - 2>&1 | sed -n 's/^ \(\/.*\)/\1/p'); \
	for d in linux asm asm-generic; do \
		for i in $$inc; do [ -d "$$i/$$d" ] && { ln -sfn "$$i/$$d" $(MUSL_KINC)/$$d; break; }; done; \
		[ -e $(MUSL_KINC)/$$d ] || { echo "musl: no kernel headers ($$d/) found (Debian's linux-libc-dev)"; exit 1; }; \
	done
	@touch $@

$(MUSL_BUILD)/obj/%.o: shim/%.c $(wildcard shim/*/*.h common/*.h) include/sockaudit.h $(MUSL_JANSSON)/lib/libjansson.a $(MUSL_KINC)/.stamp
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(MUSL_CFLAGS) -c -o $@ $<

$(MUSL_BUILD)/obj/%.o: shim/%.S
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(MUSL_CFLAGS) -c -o $@ $<

# No DT_NEEDED (-nodefaultlibs): musl's loader binds our libc calls from
# the process's libc as it would with one, and a glibc program that
# inherits LD_PRELOAD from a musl one can load us (a "libc.so" it cannot
# find would end it at start-up); there the shim passes every call through.
libsockaudit-musl.so: $(MUSL_OBJ) shim/exports.map $(BUILD)/shim.ld
	$(MUSL_CC) -shared -o $@ $(MUSL_OBJ) -Wl,--version-script=shim/exports.map $(SHIM_LAYOUT) -Wl,-T,$(BUILD)/shim.ld \
		-Wl,-fini=sa_no_dt_fini $(MUSL_USER_LDFLAGS) $(MUSL_JANSSON)/lib/libjansson.a -Wl,--exclude-libs,libjansson.a \
		$(SHIM_START) -nodefaultlibs $(shell $(CC) -print-libgcc-file-name) $(SHIM_BINDING)

# libsockaudit-musl-attach.so: the same library for `sockaudit attach` into
# a musl program. musl's dlopen refuses initial-exec TLS (static TLS is for
# what loads at start), so its TLS is global-dynamic through descriptors
# (SA_TLS in shim/base/base.h; the vfork wrapper's slot likewise): a
# preloaded musl program keeps the one-load TLS of libsockaudit-musl.so.
MUSL_ATTACH_BUILD := $(BUILD)/musl-attach
MUSL_ATTACH_OBJ   := $(patsubst $(MUSL_BUILD)/obj/%,$(MUSL_ATTACH_BUILD)/obj/%,$(MUSL_OBJ))
MUSL_ATTACH_CFLAGS := $(MUSL_CFLAGS) -DSA_TLS_MODEL='"global-dynamic"' -DSA_TLS_DESC -mtls-dialect=gnu2

$(MUSL_ATTACH_BUILD)/obj/%.o: shim/%.c $(wildcard shim/*/*.h common/*.h) include/sockaudit.h $(MUSL_JANSSON)/lib/libjansson.a $(MUSL_KINC)/.stamp
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(MUSL_ATTACH_CFLAGS) -c -o $@ $<

$(MUSL_ATTACH_BUILD)/obj/%.o: shim/%.S
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(MUSL_ATTACH_CFLAGS) -c -o $@ $<

libsockaudit-musl-attach.so: $(MUSL_ATTACH_OBJ) shim/exports.map $(BUILD)/shim.ld
	$(MUSL_CC) -shared -o $@ $(MUSL_ATTACH_OBJ) -Wl,--version-script=shim/exports.map $(SHIM_LAYOUT) -Wl,-T,$(BUILD)/shim.ld \
		-Wl,-fini=sa_no_dt_fini $(MUSL_USER_LDFLAGS) $(MUSL_JANSSON)/lib/libjansson.a -Wl,--exclude-libs,libjansson.a \
		$(SHIM_START) -nodefaultlibs $(shell $(CC) -print-libgcc-file-name) $(SHIM_BINDING)

$(MUSL_BUILD)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(MUSL_CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -idirafter $(MUSL_KINC) -o $@ $< -lpthread

musl-progs: $(MUSL_KINC)/.stamp $(MUSL_PROG_BIN)

# `make test` builds the musl library when musl-gcc is there (ensure-deps'
# test group installs it); a failed build (no registry for jansson's
# source, say) is written to $(BUILD)/musl/build.log and the musl test says
# so and skips.
ifneq ($(shell command -v $(MUSL_CC) 2>/dev/null),)
test-extra::
	@mkdir -p $(MUSL_BUILD)
	@$(MAKE) --no-print-directory musl musl-progs >$(MUSL_BUILD)/build.log 2>&1 || \
		{ rm -f libsockaudit-musl.so libsockaudit-musl-attach.so; echo "musl: build failed, see $(MUSL_BUILD)/build.log" | tee -a $(MUSL_BUILD)/build.log; }
endif
