#!/bin/sh
# make test-arm64 (mk/arm64vm.mk): the arm64 unit tests and the integration
# groups of tests/arm64/groups, run on a real arm64 kernel (scripts/arm64-vm.sh)
# against the arm64 builds of `make arm64`.
# Usage: scripts/arm64-test.sh BUILD_DIR
# The guest gets a tree laid out like a native one: the source tree's files
# (git ls-files), build/arm64/libsockaudit.so and build/arm64/sockaudit at its
# top, build/arm64/progs as build/progs, build/arm64/tests/unit's tests as
# build/tests/unit, and of tests/integration only the listed groups; there it
# runs tests/run-tests.sh as `make test` would. The last line says the
# guest's `uname -m` and its count: "aarch64: N passed, N failed".
# ARM64_TEST_TIMEOUT: each test's timeout in the guest (TEST_TIMEOUT, default
# 1800 s: TCG runs the code 10 to 30 times slower than the host);
# ARM64_TEST_JOBS: groups at a time there (TEST_JOBS, default 2); TESTS=word
# keeps the groups whose name holds it, as in `make test`.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: arm64-test.sh BUILD_DIR}
case "$build" in /*) ;; *) build=$top/$build ;; esac
arm=$build/arm64
for f in "$arm/libsockaudit.so" "$arm/sockaudit"; do
	[ -f "$f" ] || { echo "arm64-test: $f missing (make arm64)"; exit 2; }
done
share=$build/arm64-vm/test
rm -rf "$share"
mkdir -p "$share/tree"
tree=$share/tree
cd "$top" || exit 2
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
		tar -T - -cf - | tar -C "$tree" -xf -
else
	tar --exclude=./build --exclude=./.git -cf - . | tar -C "$tree" -xf -
fi
cp "$arm/libsockaudit.so" "$arm/sockaudit" "$tree/"
mkdir -p "$tree/build/progs" "$tree/build/tests/unit"
for p in "$arm"/progs/*; do [ -f "$p" ] && [ -x "$p" ] && cp "$p" "$tree/build/progs/"; done
for t in "$arm"/tests/unit/test_*; do
	case "$t" in *.*) continue ;; esac
	[ -x "$t" ] && cp "$t" "$tree/build/tests/unit/"
done
groups=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/tests/arm64/groups" | awk '{ print $1 }')
for s in "$tree"/tests/integration/*.sh; do
	n=$(basename "$s" .sh)
	printf '%s\n' $groups | grep -qx "$n" || rm -f "$s"
done
for g in $groups; do
	[ -f "$tree/tests/integration/$g.sh" ] || { echo "arm64-test: tests/arm64/groups names $g, which is not in tests/integration"; exit 2; }
done
echo "arm64-test: $(ls "$tree/build/tests/unit" | wc -l) unit tests, $(echo $groups | wc -w) integration groups," \
	"$(ls "$tree/build/progs" | wc -l) test programs"
# The machine's speed against this one (SA_SLOW, tests/lib.sh): the same
# program (tests/arm64/backlog7.c: exec, the library's start, a listen and
# 25 connects and accepts) 10 times under the library, here with the amd64
# build and there with the arm64 one; SA_SLOW is the ratio rounded up
# (at least 1, at most 10: the slack it scales grows pauses and fixtures,
# and past 10 they outlast the library's 5 s stats interval, which changes
# the lines a test reads). ARM64_SA_SLOW=N sets it instead.
# Each side takes the fastest of 3 batches of 10: the machine is shared,
# and the least disturbed batch is the nearest to its speed.
speed_ms() {   # PROGRAM LIBRARY: milliseconds for 10 runs, the fastest of 3 batches
	best=""
	for b in 1 2 3; do
		s=$(date +%s%N)
		for i in 1 2 3 4 5 6 7 8 9 10; do LD_PRELOAD=$2 SOCKAUDIT_LOG=/dev/null "$1" >/dev/null || return 1; done
		ms=$((($(date +%s%N) - s) / 1000000))
		[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
	done
	echo "$best"
}
host_ms=""
if [ -z "${ARM64_SA_SLOW:-}" ]; then
	[ -f "$top/libsockaudit.so" ] || { echo "arm64-test: $top/libsockaudit.so missing (make all): it times the host"; exit 2; }
	${CC:-cc} -std=gnu11 -O1 -o "$share/speed.host" "$top/tests/arm64/backlog7.c" || exit 2
	aarch64-linux-gnu-gcc -std=gnu11 -O1 -o "$tree/build/speed" "$top/tests/arm64/backlog7.c" || exit 2
	host_ms=$(speed_ms "$share/speed.host" "$top/libsockaudit.so") || { echo "arm64-test: the speed program failed here"; exit 2; }
	echo "arm64-test: 10 runs of tests/arm64/backlog7.c under the library here: $host_ms ms"
fi
cat >"$share/job.sh" <<EOF
# Copied off the share first: the tests write into their tree (build/test-lines)
# and the root disk is an ext4 one (writes go to qemu's snapshot).
cp -a /sa/tree /root/t || exit 2
cd /root/t
uname -m >/sa/uname
echo "arm64-test: on \$(uname -m), kernel \$(uname -r), \$(nproc) cpus"
slow=${ARM64_SA_SLOW:-}
if [ -z "\$slow" ]; then
	ms=""
	for b in 1 2 3; do
		s=\$(date +%s%N)
		for i in 1 2 3 4 5 6 7 8 9 10; do LD_PRELOAD=/root/t/libsockaudit.so SOCKAUDIT_LOG=/dev/null build/speed >/dev/null || exit 2; done
		m=\$(((\$(date +%s%N) - s) / 1000000))
		[ -z "\$ms" ] || [ \$m -lt \$ms ] && ms=\$m
	done
	slow=\$(((ms + $host_ms - 1) / $host_ms))
	[ \$slow -ge 1 ] || slow=1; [ \$slow -le 10 ] || slow=10
	echo "arm64-test: the same 10 runs here: \$ms ms against $host_ms ms there: \$(((ms + $host_ms - 1) / $host_ms)) times slower, SA_SLOW=\$slow"
fi
SA_SLOW=\$slow TEST_JOBS=${ARM64_TEST_JOBS:-2} TEST_TIMEOUT=${ARM64_TEST_TIMEOUT:-1800} TESTS='${TESTS:-}' tests/run-tests.sh
EOF
start=$(date +%s)
ARM64_VM_TIMEOUT=${ARM64_VM_TIMEOUT:-5400} "$top/scripts/arm64-vm.sh" run "$build" "$share"
rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$share/out" 2>/dev/null | tail -1)
echo "arm64-test: $(($(date +%s) - start)) s from boot to power-off"
if [ -z "$line" ]; then
	echo "arm64-test: the run ended (status $rc) without a count"
	echo "$(cat "$share/uname" 2>/dev/null || echo unknown): 0 passed, 1 failed"
	exit 1
fi
echo "$(cat "$share/uname"): $line"
[ "$rc" = 0 ]
