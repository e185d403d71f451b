#!/bin/bash
# The Debian package (`make deb`): its layout, its Depends (computed by
# dpkg-shlibdeps, no higher than the glibc floor), lintian without errors,
# and a real install on this machine and in the Debian 11 root: `sockaudit
# -o FILE -- python3 ...` from /usr/bin audits the program, and `dpkg -r`
# takes every file away again. The host install is removed by a trap, and
# skipped when someone else has the package installed.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/deb11_lib.sh"

arch=$(dpkg --print-architecture); triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
ver=$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")
deb=$BUILD/deb/sockaudit_${ver}_$arch.deb
if [ ! -f "$deb" ]; then
	make -C "$TOP" --no-print-directory deb-build >"$T/build.log" 2>&1 || { fail "make deb-build" "$(tail -5 "$T/build.log")"; finish; }
fi
check "the .deb is built ($deb)" [ -f "$deb" ]
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$T/files"
for f in /usr/bin/sockaudit /usr/lib/$triplet/sockaudit/libsockaudit.so /usr/share/man/man1/sockaudit.1.gz \
	 /usr/share/man/man7/libsockaudit.7.gz /usr/share/doc/sockaudit/README.md.gz /usr/share/doc/sockaudit/copyright; do
	check "package holds $f" grep -qx "$f" "$T/files"
done
check "no library in an ldconfig directory (only the private /usr/lib/$triplet/sockaudit/)" \
	[ -z "$(grep -E "^/usr/lib/($triplet/)?[^/]+\.so" "$T/files")" ]
dep=$(dpkg-deb -f "$deb" Depends)
libc=$(echo "$dep" | sed -n 's/.*libc6 (>= \([0-9.]*\)).*/\1/p')
at_floor() { [ -n "$libc" ] && dpkg --compare-versions "$libc" le 2.17; }
check "Depends from dpkg-shlibdeps: '$dep', libc6 no higher than 2.17" at_floor
check "Architecture: $arch, this machine's ($(dpkg-deb -f "$deb" Architecture))" [ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ]
# The cross-built arm64 package (make deb ARCH=arm64), when there: its
# architecture, aarch64 files in aarch64's directory, the same floor.
adeb=$BUILD/arm64/deb/sockaudit_${ver}_arm64.deb
if [ "$arch" = amd64 ] && [ -f "$adeb" ]; then
	rm -rf "$T/a"; dpkg-deb -x "$adeb" "$T/a"
	check "arm64 package: Architecture arm64 ($(dpkg-deb -f "$adeb" Architecture))" [ "$(dpkg-deb -f "$adeb" Architecture)" = arm64 ]
	check "arm64 package: launcher and library are aarch64 ELF" sh -c "file -L '$T/a/usr/bin/sockaudit' '$T/a/usr/lib/aarch64-linux-gnu/sockaudit/libsockaudit.so' | grep -c 'ARM aarch64' | grep -qx 2"
	alibc=$(dpkg-deb -f "$adeb" Depends | sed -n 's/.*libc6 (>= \([0-9.]*\)).*/\1/p')
	check "arm64 package: libc6 no higher than 2.17 (${alibc:-none})" sh -c "[ -n '$alibc' ] && dpkg --compare-versions '$alibc' le 2.17"
	if command -v lintian >/dev/null; then
		lintian --info "$adeb" 2>/dev/null | grep -v '^running with root' >"$T/alintian"
		check "arm64 package: lintian, no error ($(grep -c '^E:' "$T/alintian") errors, $(grep -c '^W:' "$T/alintian") warnings)" \
			[ -z "$(grep '^E:' "$T/alintian")" ]
	fi
else
	echo "ok - the arm64 package # SKIP not built (make deb ARCH=arm64)"
fi
check "Depends names no jansson (linked statically)" [ -z "$(echo "$dep" | grep -i jansson)" ]
# The packaged library is built with dpkg-buildflags (_FORTIFY_SOURCE):
# musl's loader, which takes it when an audited glibc program execs a musl
# one, must find every import in musl's libc (shim/base/link.c).
if [ -x /lib/ld-musl-x86_64.so.1 ]; then
	rm -rf "$T/x"; dpkg-deb -x "$deb" "$T/x"
	missing=$(comm -23 <(nm -D --undefined-only "$T/x/usr/lib/$triplet/sockaudit/libsockaudit.so" | awk '{ print $2 }' | sed 's/@.*//' | sort -u) \
		<(nm -D --defined-only "$(readlink -f /lib/ld-musl-x86_64.so.1)" | awk '{ print $3 }' | sort -u) | tr '\n' ' ')
	check "the packaged library imports nothing musl's libc lacks${missing:+: missing $missing}" [ -z "$missing" ]
else
	echo "ok - the packaged library imports nothing musl's libc lacks # SKIP no musl (musl-tools)"
fi
# Built with Debian's LDFLAGS (-z relro), the packaged library still has
# the binding and layout the Makefile chooses: no RELRO, whose read-only
# region would start at the data segment and take in the zero tables the
# library writes (shim/sa_proc.ld), and no -z now.
rm -rf "$T/x"; dpkg-deb -x "$deb" "$T/x"
plib=$T/x/usr/lib/$triplet/sockaudit/libsockaudit.so
relro=$(readelf -lW "$plib" | grep -c GNU_RELRO)
now=$(readelf -dW "$plib" | grep -cE 'BIND_NOW|FLAGS.* NOW')
check "the packaged library: no GNU_RELRO ($relro), no BIND_NOW ($now)" [ "$relro$now" = 00 ]
if command -v lintian >/dev/null; then
	lintian --info "$deb" 2>/dev/null | grep -v '^running with root' >"$T/lintian"
	sed 's/^/# lintian: /' "$T/lintian"
	check "lintian: no error ($(grep -c '^E:' "$T/lintian") errors, $(grep -c '^W:' "$T/lintian") warnings)" \
		[ -z "$(grep '^E:' "$T/lintian")" ]
else
	fail "lintian is installed" "scripts/ensure-deps.sh deb"
fi

# audited_run WHERE LOG OUT: what a python3 client and server under the
# installed launcher must log: backlog 5 kept, 3 accepts, 3 connects ok.
cat >"$T/pair.py" <<'PY'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5)
for i in range(3):
    c = socket.create_connection(s.getsockname()); x, _ = s.accept(); x.close(); c.close()
print("pairs 3")
PY
audited() {
	local where=$1 log=$2 out=$3
	check "$where: sockaudit from /usr/bin ran python3 ($(cat "$out"))" [ "$(cat "$out")" = "pairs 3" ]
	check_jq "$where: the log has backlog 5 kept, 3 accepts and 3 connects ok" "$log" \
		'([.[] | select(.event=="listen") | [.backlog_requested, .backlog_effective]] == [[5,5]]) and
		 ([.[] | select(.event=="summary") | .listeners[0].accepts, .connects.ok] == [3,3])'
}
# gone WHERE ROOT LIST: nothing of the package is left after dpkg -r.
gone() {
	local where=$1 root=$2 list=$3 left="" f st
	while read -r f; do [ -n "$f" ] && [ ! -d "$root$f" ] && [ -e "$root$f" ] && left="$left $f"; done <"$list"
	for f in /usr/lib/$triplet/sockaudit /usr/share/doc/sockaudit; do [ -e "$root$f" ] && left="$left $f"; done
	check "$where: dpkg -r left no file behind${left:+ (left:$left)}" [ -z "$left" ]
}
# uninstalled CMD...: dpkg-query (run by CMD...) has no installed or
# half-removed sockaudit (no conffiles: dpkg -r forgets the package).
uninstalled() {
	local st
	st=$("$@" -W -f='${db:Status-Status}' sockaudit 2>/dev/null)
	[ -z "$st" ] || [ "$st" = not-installed ]
}
dpkg_retry() {       # dpkg waits for no lock: another apt may be running
	local i
	for i in $(seq 60); do "$@" >"$T/dpkg.log" 2>&1 && return 0
		grep -q 'lock' "$T/dpkg.log" || return 1; sleep 2; done
	return 1
}

# ---- this machine -------------------------------------------------------------
exec 7>/run/lock/sockaudit-pkg-test.lock; flock 7
st=$(dpkg-query -W -f='${db:Status-Status}' sockaudit 2>/dev/null)
if [ "$(id -u)" != 0 ]; then
	ok "this machine # SKIP not root"
elif [ -n "$st" ] && [ "$st" != not-installed ]; then
	ok "this machine # SKIP sockaudit is installed here already ($st): not touching it"
else
	on_exit "dpkg -r sockaudit"
	if dpkg_retry dpkg -i "$deb"; then
		ok "this machine: dpkg -i"
		dpkg -L sockaudit >"$T/host.list"
		( cd "$T" && /usr/bin/sockaudit -o host.jsonl -- python3 pair.py >host.out 2>host.err )
		audited "this machine" "$T/host.jsonl" "$T/host.out"
		check "this machine: the launcher found the installed library and said nothing ($(head -c 200 "$T/host.err"))" [ ! -s "$T/host.err" ]
		dpkg_retry dpkg -r sockaudit; check "this machine: dpkg -r ($(tail -1 "$T/dpkg.log"))" [ $? = 0 ]
		check "this machine: dpkg knows no sockaudit any more" uninstalled dpkg-query
		gone "this machine" "" "$T/host.list"
	else
		fail "this machine: dpkg -i" "$(tail -3 "$T/dpkg.log")"
	fi
fi
flock -u 7

# ---- the Debian 11 root ---------------------------------------------------------
deb11_root "Debian 11 root: install the package"
deb11_lock exclusive
cp "$deb" "$R/tmp/sockaudit.deb"; cp "$T/pair.py" "$R/tmp/pair.py"; on_exit rm -f "$R/tmp/sockaudit.deb" "$R/tmp/pair.py" "$R/tmp/old.jsonl"
on_exit "in_root dpkg -r sockaudit"
if in_root dpkg -i /tmp/sockaudit.deb >"$T/d11.log" 2>&1; then
	ok "Debian 11: dpkg -i (glibc $(in_root getconf GNU_LIBC_VERSION))"
	in_root dpkg -L sockaudit >"$T/d11.list"
	( in_root sh -c 'cd /tmp && /usr/bin/sockaudit -o /tmp/old.jsonl -- python3 pair.py' >"$T/d11.out" 2>"$T/d11.err" )
	cp "$R/tmp/old.jsonl" "$T/d11.jsonl" 2>/dev/null
	audited "Debian 11" "$T/d11.jsonl" "$T/d11.out"
	check "Debian 11: nothing on stderr ($(head -c 300 "$T/d11.err"))" [ ! -s "$T/d11.err" ]
	in_root dpkg -r sockaudit >"$T/d11r.log" 2>&1; check "Debian 11: dpkg -r ($(tail -1 "$T/d11r.log"))" [ $? = 0 ]
	check "Debian 11: dpkg knows no sockaudit any more" uninstalled in_root dpkg-query
	gone "Debian 11" "$R" "$T/d11.list"
else
	fail "Debian 11: dpkg -i" "$(tail -3 "$T/d11.log" | tr '\n' ' ')"
fi
finish
