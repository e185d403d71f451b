#!/bin/bash
# A 20-second libFuzzer run over the option decoders, the SOCKAUDIT_* parser
# and event formatting (tests/fuzz/fuzz_shim.c, built by mk/hardening.mk with
# clang -fsanitize=fuzzer,address,undefined). `make fuzz` runs longer.
. "$(dirname "$0")/../lib.sh"

bin=$BUILD/fuzz/fuzz_shim
secs=${FUZZ_TEST_SECONDS:-20}
if [ ! -x "$bin" ]; then
	if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
		echo "ok - fuzz # SKIP clang is not installed (scripts/ensure-deps.sh fuzz installs it)"
		finish
	fi
	fail "fuzz target built" "$bin missing though clang is installed (make fuzz-build)"
	finish
fi
mkdir -p "$T/corpus" "$BUILD/fuzz/crashes"
"$bin" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$BUILD/fuzz/crashes/" "$T/corpus" "$TOP/tests/fuzz/seeds" >"$T/log" 2>&1; rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/log")
cov=$(grep -oE 'cov: [0-9]+' "$T/log" | tail -1)
if [ $rc = 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
	ok "fuzz: $runs inputs in ${secs}s, no crash ($cov)"
else
	fail "fuzz: no crash in ${secs}s" "exit $rc after ${runs:-?} inputs"
	grep -E 'ERROR|SUMMARY|#0 |#1 |#2 |#3 |#4 |Test unit written|runtime error' "$T/log" | head -30 | sed 's/^/# /'
	grep -E '^(Base64|artifact_prefix)' "$T/log" | sed 's/^/# /'
	echo "# reproduce: $bin <the crash file above>"
fi
finish
