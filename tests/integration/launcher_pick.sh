#!/bin/bash
# The launcher picks the library by the program's interpreter (PT_INTERP):
# a musl program (built here with musl-gcc) gets libsockaudit-musl.so and is
# audited; with no musl library installed it runs without any library of
# ours, one line on stderr says so, and its exit status is its own (a glibc
# library preloaded into it would stop it: musl's loader exits 127).
. "$(dirname "$0")/../lib.sh"
# A sanitizer build of the library and launcher needs its runtime preloaded
# first, which neither a chroot nor a musl program has: this is about the
# release build.
case ${SANITIZE:-} in ?*) echo "ok - launcher picks the library # SKIP SANITIZE=$SANITIZE build"; finish ;; esac

SA=$TOP/sockaudit
command -v musl-gcc >/dev/null || { fail "musl-gcc is installed" "scripts/ensure-deps.sh oldlibc (musl-tools)"; finish; }
cat >"$T/m.c" <<'C'
#include <stdio.h>
#include <sys/socket.h>
#include <netinet/in.h>
int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	int s = socket(AF_INET, SOCK_STREAM, 0);
	bind(s, (struct sockaddr *)&a, sizeof a);
	printf("musl listen %d\n", listen(s, 5));
	return 4;
}
C
musl-gcc -o "$T/m" "$T/m.c" || { fail "musl-gcc builds a program"; finish; }
interp=$(readelf -l "$T/m" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
check "the program's interpreter is musl's ($interp)" grep -q ld-musl <<<"$interp"

# No musl library: a copy of the launcher beside libsockaudit.so alone.
mkdir -p "$T/nomusl"; cp "$SA" "$TOP/libsockaudit.so" "$T/nomusl/"
if [ -e /usr/local/lib/sockaudit/libsockaudit-musl.so ]; then
	ok "no musl library # SKIP one is installed in /usr/local/lib/sockaudit, where the launcher looks last"
else
	"$T/nomusl/sockaudit" -o "$T/none.jsonl" -- "$T/m" >"$T/none.out" 2>"$T/none.err"; rc=$?
	check "no musl library: the program runs, its status 4 kept (got $rc, $(cat "$T/none.out"))" \
		[ "$rc $(cat "$T/none.out")" = "4 musl listen 0" ]
	check "no musl library: one line says so ($(cat "$T/none.err"))" \
		[ "$(cat "$T/none.err")" = "sockaudit: $T/m uses musl ($interp) and libsockaudit-musl.so is not installed: running it without the audit library, nothing will be logged" ]
	check "no musl library: no log, and no glibc library forced on it" [ ! -e "$T/none.jsonl" ]
	printf '#!%s\n' "$T/m" >"$T/m.sh"; chmod +x "$T/m.sh"
	"$T/nomusl/sockaudit" -o "$T/none2.jsonl" -- "$T/m.sh" >/dev/null 2>"$T/none2.err"; rc=$?
	check "through a #! line: the interpreter's C library decides, status 4 (got $rc: $(cat "$T/none2.err"))" \
		[ "$rc" = 4 ] && grep -qx "sockaudit: $T/m.sh uses musl .* nothing will be logged" "$T/none2.err"
	# The glibc library forced into it anyway (an audited glibc program
	# exec'd it): musl's loader takes it, and it runs as plain, unaudited.
	SOCKAUDIT_LOG="$T/forced.jsonl" LD_PRELOAD=$TOP/libsockaudit.so "$T/m" >/dev/null 2>"$T/forced.err"; rc=$?
	check "the glibc library forced into it: it runs as plain (status $rc, stderr: $(head -c 200 "$T/forced.err"))" \
		[ "$rc" = 4 ] && [ ! -s "$T/forced.err" ] && [ ! -e "$T/forced.jsonl" ]
fi

# With the musl library (make musl): audited like a glibc program.
if [ ! -f "$TOP/libsockaudit-musl.so" ]; then
	ok "musl library # SKIP libsockaudit-musl.so is not built here (make musl)"
else
	"$SA" -o "$T/musl.jsonl" -- "$T/m" >"$T/musl.out" 2>"$T/musl.err"; rc=$?
	check "musl library: the program runs, status 4 (got $rc, $(cat "$T/musl.out"))" [ "$rc $(cat "$T/musl.out")" = "4 musl listen 0" ]
	check "musl library: nothing on stderr ($(head -c 300 "$T/musl.err"))" [ ! -s "$T/musl.err" ]
	check_jq "musl library: the log has the listen with backlog 5 kept" "$T/musl.jsonl" \
		'[.[] | select(.event=="listen") | [.backlog_requested, .backlog_effective]] == [[5,5]]'
fi
# A glibc program still gets libsockaudit.so.
"$SA" -o "$T/g.jsonl" -- python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(6)' 2>"$T/g.err"
check_jq "glibc program: libsockaudit.so audits it (listen, backlog 6)" "$T/g.jsonl" \
	'[.[] | select(.event=="listen") | .backlog_requested] == [6]'
finish
