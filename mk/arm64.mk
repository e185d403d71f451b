# mk/arm64.mk: the aarch64 build, made on this machine with Debian's cross
# compiler. Never part of `make test` (CI has no cross compiler).
#   make arm64                 build/arm64/libsockaudit.so, build/arm64/sockaudit,
#                              the unit tests build/arm64/tests/unit/test_* and the
#                              test programs build/arm64/progs/*, after
#                              scripts/ensure-deps.sh arm64 installed what it needs
#   make arm64-smoke           sockaudit --version and the unit tests under
#                              qemu-user (which truncates TCP_INFO: no kernel facts)
#   make check-abi ARCH=arm64  the glibc floor of both builds (plain check-abi
#                              checks the arm64 one too when it exists or can be made)
#   make deb ARCH=arm64        build/arm64/deb/sockaudit_<version>_arm64.deb (mk/pkg.mk)
# It is this Makefile again, run with the cross compiler as CC (and its
# pkg-config) and BUILD=build/arm64: whatever differs per architecture is
# derived from $(CC) or the compiler's own macros (docs/design.md, "Per
# architecture"), never set here.
ARM64_TRIPLET := aarch64-linux-gnu
ARM64_CC      ?= $(ARM64_TRIPLET)-gcc
# The multiarch libc6:arm64 is the loader and libc the binaries find
# (/lib/ld-linux-aarch64.so.1). Not -L /usr/aarch64-linux-gnu: qemu then
# takes the cross package's ld.so but still finds the multiarch libc.so.6,
# two builds of glibc in one process, and test_line's fork hung there.
ARM64_QEMU    ?= qemu-aarch64-static

ifeq ($(SA_CROSS),)
ARM64_BUILD   := $(BUILD)/arm64
ARM64_MAKE     = $(MAKE) --no-print-directory SA_CROSS=arm64 CC=$(ARM64_CC) PKG_CONFIG=$(ARM64_TRIPLET)-pkg-config \
		 BUILD=$(ARM64_BUILD) OUTDIR=$(ARM64_BUILD)/ SANITIZE=
# The cross compiler and arm64's jansson are both here: a plain check-abi
# can bring the arm64 build up to date without installing anything.
ARM64_READY   := $(if $(shell command -v $(ARM64_CC) 2>/dev/null),$(shell $(ARM64_TRIPLET)-pkg-config --exists jansson 2>/dev/null && echo y))

.PHONY: arm64 arm64-build arm64-smoke check-abi-arm64
arm64:
	@scripts/ensure-deps.sh arm64
	@$(MAKE) --no-print-directory arm64-build

arm64-build:
	+@$(ARM64_MAKE) cross-build

# qemu-user answers TCP_INFO with 4 bytes: test_quickack's state machine
# (it counts data segments) and test_tcpinfo's *_full tests skip there;
# they need an arm64 kernel.
arm64-smoke: arm64
	$(ARM64_QEMU) $(ARM64_BUILD)/sockaudit --version
	@mkdir -p $(ARM64_BUILD)/smoke; rc=0; for t in $(ARM64_BUILD)/tests/unit/test_*; do \
		log=$(ARM64_BUILD)/smoke/$${t##*/}.log; \
		$(ARM64_QEMU) $$t >$$log 2>&1 && echo "ok   $$t" || { rc=1; echo "FAIL $$t (see $$log)"; }; \
	done; exit $$rc

ifeq ($(ARCH),arm64)
check-abi: check-abi-arm64
check-abi-arm64: arm64
else ifneq ($(ARM64_READY)$(wildcard $(ARM64_BUILD)/libsockaudit.so),)
check-abi: check-abi-arm64
endif
check-abi-arm64:
	+@$(if $(ARM64_READY),$(ARM64_MAKE) all,echo "check-abi: no cross compiler or arm64 jansson: checking $(ARM64_BUILD) as it is")
	@scripts/check-abi.sh --floor $(ABI_FLOOR) $(ARM64_BUILD)/libsockaudit.so $(ARM64_BUILD)/sockaudit
else
# Inside the cross build: what `make arm64` makes.
.PHONY: cross-build
cross-build: all $(UNIT_BIN) $(PROG_BIN)
endif
