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
	if [ -f libsockaudit-musl.so ]; then scripts/check-abi.sh --musl $(MUSL_LIBC) libsockaudit-musl.so || rc=1; fi; \
	exit $$rc
