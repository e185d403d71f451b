#!/bin/bash
# The shim's floors call only down (make check-layers), and the check
# really fails on an upward reference or a circle inside a floor.
. "$(dirname "$0")/../lib.sh"
OBJ=$BUILD/obj
CHECK=$TOP/scripts/check-layers.py

out=$("$CHECK" "$OBJ" 2>&1)
if [ $? = 0 ]; then ok "the built objects call only down"; else fail "the built objects call only down" "$out"; fi

# A copy of the objects with one upward call planted in base/.
cp -r "$OBJ" "$T/obj"
printf 'void sa_on_socket(int, int, int, int);\nvoid sa_planted(void);\nvoid sa_planted(void) { sa_on_socket(0, 0, 0, 0); }\n' >"$T/up.c"
cc -c -o "$T/obj/base/zz_planted.o" "$T/up.c"
out=$("$CHECK" "$T/obj" 2>&1)
if [ $? != 0 ] && grep -q "upward: .*zz_planted.o (base) uses sa_on_socket" <<<"$out"; then
	ok "an upward call from base/ to core/ is refused"
else
	fail "an upward call from base/ to core/ is refused" "$out"
fi
rm -f "$T/obj/base/zz_planted.o"

# A judge that adds its own finding (the line floor's sa_findings_add): the
# judge floor calls nothing of the shim.
printf 'void sa_findings_add(void *, const char *, const char *, ...);\nvoid sa_planted3(void);\nvoid sa_planted3(void) { sa_findings_add(0, "x", "y"); }\n' >"$T/up3.c"
cc -c -o "$T/obj/judge/zz_planted.o" "$T/up3.c"
out=$("$CHECK" "$T/obj" 2>&1)
if [ $? != 0 ] && grep -q "upward: .*zz_planted.o (judge) uses sa_findings_add" <<<"$out"; then
	ok "a judge that adds a finding itself is refused"
else
	fail "a judge that adds a finding itself is refused" "$out"
fi
rm -f "$T/obj/judge/zz_planted.o"

# A libc name the shim exports (core/interpose.o) called from line/.
printf 'long send(int, const void *, unsigned long, int);\nvoid sa_planted2(void);\nvoid sa_planted2(void) { send(0, 0, 0, 0); }\n' >"$T/up2.c"
cc -c -o "$T/obj/line/zz_planted.o" "$T/up2.c"
out=$("$CHECK" "$T/obj" 2>&1)
if [ $? != 0 ] && grep -q "upward: .*zz_planted.o (line) uses send" <<<"$out"; then
	ok "calling the shim's own exported send() from line/ is refused"
else
	fail "calling the shim's own exported send() from line/ is refused" "$out"
fi
rm -f "$T/obj/line/zz_planted.o"

# Two files of one floor calling each other.
printf 'void sa_ping(void);\nvoid sa_pong(void);\nvoid sa_ping(void) { sa_pong(); }\n' >"$T/a.c"
printf 'void sa_ping(void);\nvoid sa_pong(void);\nvoid sa_pong(void) { sa_ping(); }\n' >"$T/b.c"
cc -c -o "$T/obj/state/zz_a.o" "$T/a.c"; cc -c -o "$T/obj/state/zz_b.o" "$T/b.c"
out=$("$CHECK" "$T/obj" 2>&1)
if [ $? != 0 ] && grep -q "circle: .*zz_a.o.*zz_b.o" <<<"$out"; then
	ok "a circle inside a floor is refused"
else
	fail "a circle inside a floor is refused" "$out"
fi

# No header of a higher floor is included from a lower one.
bad=$(cd "$TOP/shim" && layers="judge base line kernel state audit core"; i=0
	for l in $layers; do
		j=0
		for h in $layers; do
			[ $j -gt $i ] && grep -ln "#include \"$h/" $l/*.c $l/*.h 2>/dev/null | sed "s|\$| includes $h/|"
			j=$((j + 1))
		done
		i=$((i + 1))
	done)
if [ -z "$bad" ]; then ok "no floor includes a higher floor's header"; else fail "no floor includes a higher floor's header" "$bad"; fi

# The CLI and common/ see one floor of the shim's headers: the judges'.
bad=$(cd "$TOP" && grep -rln '#include "\(base\|line\|kernel\|state\|audit\|core\)/' cli common)
if [ -z "$bad" ]; then ok "cli/ and common/ include no shim header but judge/judge.h"; else fail "cli/ and common/ include no shim header but judge/judge.h" "$bad"; fi

# Files stay readable: none over about 500 lines.
big=$(find "$TOP/shim" "$TOP/cli" "$TOP/common" -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 520 {print $2 ": " $1}')
if [ -z "$big" ]; then ok "no source file over 520 lines"; else fail "no source file over 520 lines" "$big"; fi
finish
