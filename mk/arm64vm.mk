# mk/arm64vm.mk: a real arm64 kernel under qemu-system-aarch64 (TCG), for
# what qemu-user cannot show (it truncates TCP_INFO to 4 bytes).
#   make arm64-vm     the machine, built once into $(BUILD)/arm64-vm
#                     (scripts/arm64-vm.sh setup: a Debian 12 arm64 root, its
#                     kernel and initrd), after scripts/ensure-deps.sh arm64vm
#   make test-arm64   the arm64 unit tests and the integration groups of
#                     tests/arm64/groups on that kernel, against `make arm64`'s
#                     builds (scripts/arm64-test.sh); ends with
#                     "aarch64: N passed, N failed"
#   scripts/arm64-run SOURCE.c ARGS...   one program there, under the library
# Never part of `make test` (about 30 minutes; CI has no qemu). docs/testing.md, "arm64".
ifeq ($(SA_CROSS),)
.PHONY: arm64-vm test-arm64
arm64-vm:
	@scripts/ensure-deps.sh arm64vm
	@scripts/arm64-vm.sh setup $(BUILD)

test-arm64: all arm64 arm64-vm
	@scripts/arm64-test.sh $(BUILD)
endif
