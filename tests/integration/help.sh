#!/bin/bash
# The CLI's help and its man page name everything the code parses. The
# verbs and options are read from cli/*.c and cli/*/*.c by scripts/cli-options.py (the
# verbs cli/main.c dispatches on; getopt strings, getopt_long tables and
# option literals compared with strcmp), so a verb or option added to the
# code without its help line or man page entry fails here. Each one must
# appear in `sockaudit --help` (every verb with its options) and in
# docs/man/sockaudit.1, and each verb must answer `sockaudit VERB --help`.
. "$(dirname "$0")/../lib.sh"
SA=$TOP/sockaudit
MAN=$TOP/docs/man/sockaudit.1
[ -x "$SA" ] || { fail "sockaudit built" "$SA missing"; finish; }

# cli/conf/ reads the wrapped programs' command lines (nginx -c, memcached -b):
# their options, not sockaudit's.
"$TOP/scripts/cli-options.py" "$TOP"/cli/*.c $(ls "$TOP"/cli/*/*.c | grep -v '/cli/conf/') >"$T/parsed"
verbs=$(awk '$1 == "verb" { print $2 }' "$T/parsed")
opts=$(awk '$1 == "option" { print $2 }' "$T/parsed")
[ -n "$verbs" ] && [ "$(echo "$opts" | wc -l)" -ge 5 ] &&
	ok "cli/ parses $(echo "$verbs" | wc -l) verbs and $(echo "$opts" | wc -l) options: $(echo $verbs $opts)" ||
	fail "verbs and options read from cli/" "$(cat "$T/parsed")"

"$SA" --help >"$T/help" 2>"$T/err"; rc=$?
[ $rc = 0 ] && [ -s "$T/help" ] && [ ! -s "$T/err" ] && ok "sockaudit --help: usage on stdout, status 0" ||
	fail "sockaudit --help: usage on stdout, status 0" "status $rc, stderr $(head -c 200 "$T/err")"
# The man page as text: font changes dropped, \- is a hyphen.
sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\(em/--/g' "$MAN" >"$T/man"

# names WORD FILE: WORD stands alone in FILE (not inside a longer option).
names() { grep -qE -- "(^|[^A-Za-z0-9-])$(printf '%s' "$1" | sed 's/[.]/\\./g')([^A-Za-z0-9-]|$)" "$2"; }

miss_help= miss_man=
for o in $opts; do
	names "$o" "$T/help" || miss_help="$miss_help $o"
	names "$o" "$T/man" || miss_man="$miss_man $o"
done
[ -z "$miss_help" ] && ok "sockaudit --help names every option the code parses" ||
	fail "sockaudit --help names every option the code parses" "missing:$miss_help"
[ -z "$miss_man" ] && ok "sockaudit(1) names every option the code parses" ||
	fail "sockaudit(1) names every option the code parses" "missing:$miss_man"

for v in $verbs; do
	grep -qE "sockaudit $v( |$)" "$T/help" && grep -qE "^ +$v( |$)" "$T/help" &&
		ok "sockaudit --help names the verb $v" || fail "sockaudit --help names the verb $v" "$(head -5 "$T/help")"
	grep -qE "sockaudit $v( |$)" "$T/man" && ok "sockaudit(1) names the verb $v" ||
		fail "sockaudit(1) names the verb $v" "no 'sockaudit $v' in $MAN"
	"$SA" "$v" --help >"$T/vhelp" 2>"$T/err"; rc=$?
	[ $rc = 0 ] && grep -q "^usage: sockaudit $v" "$T/vhelp" && ok "sockaudit $v --help: its own usage, status 0" ||
		fail "sockaudit $v --help: its own usage, status 0" "status $rc: $(head -c 200 "$T/vhelp") $(head -c 200 "$T/err")"
done

# The check itself: an option the code parses but no text names is caught.
cp "$TOP"/cli/*.c "$T/" && printf 'static const char *probe = "--sa-undocumented-probe";\n' >>"$T/main.c"
"$TOP/scripts/cli-options.py" "$T"/*.c | grep -qx "option --sa-undocumented-probe" &&
	! names --sa-undocumented-probe "$T/help" && ok "an option added to the code without help is found" ||
	fail "an option added to the code without help is found" "cli-options.py did not report it"
finish
