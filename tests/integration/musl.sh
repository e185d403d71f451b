#!/bin/bash
# musl: libsockaudit-musl.so (make musl) under programs linked with musl.
# The project's own test programs, built with musl-gcc (build/musl/progs),
# run under the musl library and give the same facts as the glibc builds
# under libsockaudit.so: listen and its backlog read-back, setsockopt
# read-back, accept counts, connect outcomes (blocking, non-blocking decided
# by getsockopt or by the first write), threads, a vfork child.
. "$(dirname "$0")/../lib.sh"

MLIB=${SA_MUSL_LIB:-$TOP/libsockaudit-musl.so}
MPROGS=$BUILD/musl/progs
if [ ! -f "$MLIB" ] || [ ! -x "$MPROGS/acc_server" ]; then
	why=$(tail -n 1 "$BUILD/musl/build.log" 2>/dev/null)
	# Only what this machine cannot provide is a skip (no registry for
	# jansson's source, no musl-gcc); a build that had its inputs and
	# failed is a failure.
	if [ -f "$BUILD/musl/jansson/lib/libjansson.a" ] && command -v musl-gcc >/dev/null; then
		echo "not ok - musl build # libsockaudit-musl.so not built though jansson for musl is: ${why:-no build log}"
		exit 1
	fi
	echo "ok - musl build # SKIP libsockaudit-musl.so not built (make musl): ${why:-no build log}"
	exit 0
fi
[ -x /lib/ld-musl-x86_64.so.1 ] || { echo "ok - musl build # SKIP no musl loader (Debian's musl)"; exit 0; }

# arm NAME LIB PROGS: the same scenarios, logs in $T/NAME.*.jsonl.
arm() {
	local n=$1 lib=$2 p=$3 true=$4 port sp rp i
	# listen, setsockopt read-back, accepts: a backlog of 7, TCP_DEFER_ACCEPT
	# 2 s (the kernel keeps 3), 3 connections whose client speaks first.
	timeout 20 env SOCKAUDIT_LEVEL=info SOCKAUDIT_LOG="$T/$n.acc.jsonl" LD_PRELOAD="$lib" \
		"$p/acc_server" -b 7 -d 2 -n 3 -T 5000 >"$T/$n.acc.out" 2>"$T/$n.acc.err" &
	sp=$!
	for i in $(seq 100); do grep -q PORT "$T/$n.acc.out" 2>/dev/null && break; sleep 0.05; done
	port=$(awk '/PORT/{ print $2 }' "$T/$n.acc.out")
	timeout 10 "$p/acc_client" -p "${port:-1}" -c 3 -s 0 >/dev/null 2>&1
	wait $sp
	echo "acc_server exit $?" >>"$T/$n.status"
	# connect outcomes against a port nobody listens on.
	for m in block nb nbio; do
		timeout 10 env SOCKAUDIT_LEVEL=info SOCKAUDIT_LOG="$T/$n.conn.jsonl" LD_PRELOAD="$lib" \
			"$p/connect_probe" $m "127.0.0.1:$RP" >>"$T/$n.conn.out" 2>&1
		echo "connect_probe $m exit $?" >>"$T/$n.status"
	done
	# 2 acceptor and 4 connector threads, 50 connections each, at trace.
	timeout 30 env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/$n.thr.jsonl" SOCKAUDIT_STATS_INTERVAL=0 LD_PRELOAD="$lib" \
		"$p/threads" 2 4 50 >"$T/$n.thr.out" 2>&1
	echo "threads exit $?" >>"$T/$n.status"
	# vfork(); close_range(3, ~0U, 0); exec of a true of the same C
	# library in the child, while the parent's non-blocking connect to a
	# refused port is pending.
	timeout 10 env SOCKAUDIT_LEVEL=info SOCKAUDIT_LOG="$T/$n.vf.jsonl" LD_PRELOAD="$lib" \
		"$p/life_vfork" "$RP" "$true" >"$T/$n.vf.out" 2>&1
	echo "life_vfork exit $?" >>"$T/$n.status"
}
RP=$(free_port)
echo 'int main(void) { return 0; }' | ${MUSL_CC:-musl-gcc} -x c - -o "$T/true-musl" ||
	{ fail "a musl true built"; exit 1; }
arm glibc "$(preload_value)" "$PROGS" /bin/true
arm musl "$MLIB" "$MPROGS" "$T/true-musl"

check "the musl programs are musl's (PT_INTERP /lib/ld-musl-x86_64.so.1)" \
	grep -q ld-musl <(readelf -lW "$MPROGS/acc_server")
check "every program ran under the musl library as under the glibc one ($(tr '\n' ';' <"$T/musl.status"))" \
	cmp -s "$T/glibc.status" "$T/musl.status"
check "the programs printed the same under both ($(tr '\n' ' ' <"$T/musl.acc.out" | sed 's/PORT [0-9]*//'))" \
	cmp -s <(sed 's/PORT [0-9]*//; s/ms=[0-9.]*//' "$T/glibc.acc.out" "$T/glibc.conn.out") \
	<(sed 's/PORT [0-9]*//; s/ms=[0-9.]*//' "$T/musl.acc.out" "$T/musl.conn.out")

# facts NAME FILE FILTER: the same jq projection of both arms' logs.
facts() {
	local what=$1 f=$2 q=$3 g m
	g=$(jq -c -s "$q" "$T/glibc.$f.jsonl" 2>&1)
	m=$(jq -c -s "$q" "$T/musl.$f.jsonl" 2>&1)
	if [ -n "$m" ] && [ "$m" != "null" ] && [ "$m" != "[]" ] && [ "$g" = "$m" ]; then
		ok "$what: $m"
	else
		fail "$what" "musl: $m; glibc: $g"
	fi
}
facts "init line" acc '[.[] | select(.event=="init") | {level, somaxconn, tcp_syncookies}]'
facts "setsockopt read-back" acc '[.[] | select(.event=="setsockopt") | {opt, requested, effective, ret, findings}]'
facts "listen and its backlog read-back" acc \
	'[.[] | select(.event=="listen") | {backlog_requested, backlog_effective, backlog_source, queue_capacity, defer_accept_s, findings}]'
facts "accept counts" acc \
	'[.[] | select(.event=="listener_stats") | {accepts, empty_accepts, errors, data_checked, first_speaker}]'
facts "event counts in the summary" acc '[.[] | select(.event=="summary") | .counts]'
facts "connect outcomes" conn '[.[] | select(.event=="connect") | {nonblocking, outcome, completed_by, ret, errno}]'
facts "threads: accepts, connects and TCP_NODELAY lines" thr \
	'{accepts: [.[] | select(.event=="accept" and .ret >= 0)] | length, connects: [.[] | select(.event=="connect" and .ret == 0)] | length,
	  nodelay: [.[] | select(.event=="setsockopt" and .opt=="TCP_NODELAY")] | length, tids: [.[] | select(.event=="connect") | .tid] | unique | length,
	  dropped: [.[] | select(.event=="summary") | .dropped]}'
check "vfork child: the parent's SO_ERROR is the kernel's, as under glibc ($(head -n 1 "$T/musl.vf.out"))" \
	cmp -s <(head -n 1 "$T/glibc.vf.out") <(head -n 1 "$T/musl.vf.out")
facts "vfork child: the parent's connect line" vf '[.[] | select(.event=="connect") | {outcome, errno}]'

# The musl attach build (global-dynamic TLS through descriptors, the vfork
# wrapper's slot likewise), preloaded: the same programs, the same facts.
MALIB=$TOP/libsockaudit-musl-attach.so
if [ -f "$MALIB" ]; then
	arm musla "$MALIB" "$MPROGS" "$T/true-musl"
	q='[.[] | select(.event=="listen" or .event=="listener_stats" or .event=="connect") | {event, backlog_effective, accepts, outcome, errno}]'
	n=$(jq -c -s "$q | length" "$T/musla.acc.jsonl" "$T/musla.conn.jsonl" "$T/musla.vf.jsonl")
	if cmp -s "$T/musl.status" "$T/musla.status" && [ "${n:-0}" -ge 5 ] &&
	   [ "$(jq -c -s "$q" "$T/musl.acc.jsonl" "$T/musl.conn.jsonl" "$T/musl.vf.jsonl")" = \
	     "$(jq -c -s "$q" "$T/musla.acc.jsonl" "$T/musla.conn.jsonl" "$T/musla.vf.jsonl")" ] &&
	   cmp -s <(head -n 1 "$T/musl.vf.out") <(head -n 1 "$T/musla.vf.out"); then
		ok "the musl attach build preloaded: every program and its $n facts as under libsockaudit-musl.so (vfork included)"
	else fail "the musl attach build preloaded" "$(tr '\n' ';' <"$T/musla.status") vs $(tr '\n' ';' <"$T/musl.status")"; fi
	check "the musl attach build has no static TLS (musl's dlopen takes it)" \
		test -z "$(readelf -dW "$MALIB" | grep STATIC_TLS)" -a -n "$(readelf -dW "$TOP/libsockaudit-musl.so" | grep STATIC_TLS)"
else fail "the musl attach build exists beside libsockaudit-musl.so (make musl)"; fi

# Under a sanitizer the test programs need its runtime first in LD_PRELOAD.
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - a glibc program under the musl library runs as plain # SKIP SANITIZE=$SANITIZE: the test programs need the sanitizer runtime first in LD_PRELOAD"
else
	# A glibc program that inherits the musl library (a musl program exec'd it
	# with LD_PRELOAD set) runs as plain: the library needs no libc.so its
	# loader could not find, and passes every call through there.
	timeout 10 env SOCKAUDIT_LEVEL=info SOCKAUDIT_LOG="$T/cross.jsonl" LD_PRELOAD="$MLIB" \
		"$PROGS/connect_probe" block "127.0.0.1:$RP" >"$T/cross.out" 2>&1; rc=$?
	check "a glibc program under the musl library runs as plain (exit $rc: $(head -n 1 "$T/cross.out" | sed 's/ms=.*//'))" \
		test "$rc" = 0 -a "$(sed 's/ms=.*//' "$T/cross.out")" = "mode=block rc=-1 errno=ECONNREFUSED "
	check "... and the musl library writes nothing there" test ! -s "$T/cross.jsonl"

	# The other way round: a musl program that inherits the glibc library
	# (an audited glibc shell exec'd it) starts and runs as plain,
	# unaudited. musl's loader binds every import at load and stops the
	# program (status 127) at one it cannot find: glibc's fortify and
	# atfork names once did that (shim/base/link.c).
	MUSL_LIBC=$(readlink -f /lib/ld-musl-x86_64.so.1)
	missing=$(comm -23 <(nm -D --undefined-only "$LIB" | awk '{ print $2 }' | sed 's/@.*//' | sort -u) \
		<(nm -D --defined-only "$MUSL_LIBC" | awk '{ print $3 }' | sort -u) | tr '\n' ' ')
	check "every import of libsockaudit.so is in musl's libc ($MUSL_LIBC)${missing:+: missing $missing}" test -z "$missing"
	timeout 10 env SOCKAUDIT_LOG="$T/inh.jsonl" LD_PRELOAD="$(preload_value)" \
		sh -c '"$1" block "$2"' sh "$MPROGS/connect_probe" "127.0.0.1:$RP" >"$T/inh.out" 2>&1; rc=$?
	check "a musl program exec'd by an audited glibc shell runs as plain (exit $rc: $(head -n 1 "$T/inh.out" | sed 's/ms=.*//'))" \
		test "$rc" = 0 -a "$(sed 's/ms=.*//' "$T/inh.out")" = "mode=block rc=-1 errno=ECONNREFUSED "
	check "... and the glibc library audits nothing there (no line)" test ! -s "$T/inh.jsonl"
	# And a glibc program that the same shell execs is still audited.
	timeout 10 env SOCKAUDIT_LOG="$T/inh2.jsonl" LD_PRELOAD="$(preload_value)" \
		sh -c '"$1" block "$2"' sh "$PROGS/connect_probe" "127.0.0.1:$RP" >/dev/null 2>&1
	check "... while a glibc program the shell execs is audited (its connect line)" \
		grep -q '"event":"connect"' "$T/inh2.jsonl"
fi
exit $_sa_failed
