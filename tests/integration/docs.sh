#!/bin/bash
# The documentation stays true to the code: README.md is a front door (at
# most 320 lines), every finding code the shim defines is in docs/findings.md,
# every SOCKAUDIT_* variable the config reads is in docs/configuration.md,
# every relative link in README.md and docs/*.md reaches a file (and, into a
# markdown page, a heading), and the man pages render without warnings.
. "$(dirname "$0")/../lib.sh"

readme=$TOP/README.md
docs=$TOP/docs

# --- README.md is short ----------------------------------------------------------
if [ -f "$readme" ]; then
	n=$(wc -l <"$readme")
	[ "$n" -le 320 ] && ok "README.md has $n lines (at most 320)" \
		|| fail "README.md has at most 320 lines" "it has $n"
else
	fail "README.md exists" "missing"
fi

# --- every finding code is documented ----------------------------------------------
# The codes: the string entries of the finding-codes table (finding_codes[] or
# sa_finding_codes[], in shim/ or common/), and every literal code the audit
# code passes to sa_findings_add(). "other" is the counters' catch-all.
srcs=$(find "$TOP/shim" "$TOP/common" -name '*.[ch]' 2>/dev/null)
codes=$( {
	for f in $(grep -l 'finding_codes\[\][^=]*=' $srcs 2>/dev/null); do
		awk '/finding_codes\[\][^=]*=/ {on=1} on {print} on && /};/ {exit}' "$f"
	done | grep -o '"[a-z_][a-z0-9_]*"'
	grep -ho 'sa_findings_add([^,]*, *"[a-z_][a-z0-9_]*"' $srcs 2>/dev/null | grep -o '"[a-z_0-9]*"'
} | tr -d '"' | grep -vx other | sort -u)
count=$(echo "$codes" | grep -c .)
[ "$count" -ge 10 ] && ok "$count finding codes read from shim/ and common/" \
	|| fail "finding codes read from shim/ and common/" "only $count parsed"
missing=""
for c in $codes; do
	grep -q -- "\`$c\`" "$docs/findings.md" 2>/dev/null || missing="$missing $c"
done
[ -z "$missing" ] && ok "every finding code is in docs/findings.md" \
	|| fail "every finding code is in docs/findings.md" "missing:$missing"

# --- every SOCKAUDIT_* variable the config reads is documented ----------------------
# Literal names in config.c, and SOCKAUDIT_ENV_* macros resolved through the
# public header, so the check holds whichever way the code spells them.
config=$(find "$TOP/shim" -name config.c | head -1)
if [ -z "$config" ]; then
	fail "config.c is found under shim/" "missing"
else
	vars=$(grep -o '"SOCKAUDIT_[A-Z_]*"' "$config" | tr -d '"')
	unresolved=""
	for m in $(grep -o 'SOCKAUDIT_ENV_[A-Z_]*' "$config" | sort -u); do
		v=$(grep -E "#define[[:space:]]+$m[[:space:]]" "$TOP/include/sockaudit.h" | grep -o '"SOCKAUDIT_[A-Z_]*"' | tr -d '"')
		[ -n "$v" ] && vars="$vars $v" || unresolved="$unresolved $m"
	done
	[ -z "$unresolved" ] || fail "every SOCKAUDIT_ENV_* name in config.c is defined in include/sockaudit.h" "not found:$unresolved"
	vars=$(echo $vars | tr ' ' '\n' | grep . | sort -u)
	count=$(echo "$vars" | grep -c .)
	[ "$count" -ge 5 ] && ok "$count SOCKAUDIT_* variables read from ${config#$TOP/}" \
		|| fail "SOCKAUDIT_* variables read from ${config#$TOP/}" "only $count parsed"
	missing=""
	for v in $vars; do
		grep -q -- "\`$v\`" "$docs/configuration.md" 2>/dev/null || missing="$missing $v"
	done
	[ -z "$missing" ] && ok "every SOCKAUDIT_* variable is in docs/configuration.md" \
		|| fail "every SOCKAUDIT_* variable is in docs/configuration.md" "missing:$missing"
fi

# --- relative links reach a file, and a heading when they name one ------------------
# GitHub's anchor of a heading: lower case, punctuation but '-' and '_'
# dropped, spaces to '-'.
anchors() {
	grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//' | tr 'A-Z' 'a-z' |
		sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}
bad=""; nlinks=0
for page in "$readme" "$docs"/*.md; do
	[ -f "$page" ] || continue
	dir=$(dirname "$page")
	# [text](target): outside code spans is good enough for our pages.
	for target in $(grep -oE '\]\([^) ]+\)' "$page" | sed -E 's/^\]\(//; s/\)$//'); do
		case "$target" in
		http://*|https://*|mailto:*) continue ;;
		esac
		nlinks=$((nlinks + 1))
		file=${target%%#*}
		frag=""
		[ "$file" != "$target" ] && frag=${target#*#}
		if [ -z "$file" ]; then
			path=$page
		else
			path=$dir/$file
		fi
		if [ ! -e "$path" ]; then
			bad="$bad ${page#$TOP/}:$target"
			continue
		fi
		if [ -n "$frag" ] && [[ "$path" == *.md ]]; then
			anchors "$path" | grep -qx -- "$frag" || bad="$bad ${page#$TOP/}:$target(no heading)"
		fi
	done
done
[ "$nlinks" -ge 10 ] && ok "$nlinks relative links found in README.md and docs/*.md" \
	|| fail "relative links found in README.md and docs/*.md" "only $nlinks"
[ -z "$bad" ] && ok "every relative link reaches its file and heading" \
	|| fail "every relative link reaches its file and heading" "broken:$bad"

# --- the jq recipes that pick lines with findings pick only those ---------------------
# A line's findings is an array; the summary's is an object of totals ({} when
# healthy, and {} is true in jq). Every recipe in README.md and docs/*.md that
# selects on .findings, run on two real logs: a healthy listener's (none may
# print anything) and one whose backlog the kernel clamped (the README's
# recipes print its listen line).
py='import socket,sys; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(int(sys.argv[1])); s.close()'
SOCKAUDIT_LOG="$T/healthy.jsonl" LD_PRELOAD="$(preload_value)" python3 -c "$py" 16
SOCKAUDIT_LOG="$T/clamped.jsonl" LD_PRELOAD="$(preload_value)" python3 -c "$py" $(( $(cat /proc/sys/net/core/somaxconn) + 1 ))
grep -ho "jq [^|]*'[^']*select(.findings[^']*'" "$readme" "$docs"/*.md | sed "s/^[^']*'//; s/'\$//" | sort -u >"$T/recipes"
nrec=$(grep -c . "$T/recipes"); bad=""
while IFS= read -r f; do
	case $f in fromjson*) opt=-R;; *) opt=;; esac
	h=$(jq $opt -c "$f" "$T/healthy.jsonl" 2>&1 | wc -l)
	[ "$h" = 0 ] || bad="$bad [$f] printed $h line(s) on a healthy run;"
done <"$T/recipes"
[ "$nrec" -ge 4 ] && [ -z "$bad" ] && ok "$nrec jq recipes on .findings print nothing for a healthy run" \
	|| fail "jq recipes on .findings print nothing for a healthy run" "$nrec recipes;$bad"
n1=$(jq -c 'select(.findings | type == "array")' "$T/clamped.jsonl" | grep -c '"listen"')
n2=$(jq -R -c 'fromjson? | select(.findings | type == "array")' "$T/clamped.jsonl" | grep -c '"backlog_clamped"')
[ "$n1" = 1 ] && [ "$n2" = 1 ] && grep -q 'select(.findings | type == "array")' "$readme" \
	&& ok "the README's recipes keep the clamped listen line" \
	|| fail "the README's recipes keep the clamped listen line" "listen lines $n1, backlog_clamped lines $n2"

# --- a unit file's SOCKAUDIT_LOG writes %%p ------------------------------------------------
# In a unit file %p is systemd's specifier (the unit name): every Environment=
# line in README.md and docs/ that sets SOCKAUDIT_LOG with a pid writes %%p.
units=$(grep -ho 'Environment=SOCKAUDIT_LOG=[^ `]*' "$readme" "$docs"/*.md | sort -u)
bad=$(echo "$units" | grep '%' | grep -v '%%p' )
[ -n "$units" ] && [ -z "$bad" ] && ok "$(echo "$units" | grep -c .) unit-file SOCKAUDIT_LOG values write %%p" \
	|| fail "unit-file SOCKAUDIT_LOG values write %%p" "found: ${units:-none}; bad: $bad"

# --- the drop-ins in README.md and docs/configuration.md are ones systemd accepts -------
# Each indented [Service] block after its heading, under a unit of our own
# (ExecStart is this machine's true); systemd-analyze verify must pass it.
dropin_check() { # FILE HEADING
	U="$T/units-$(basename "$1" .md)"; mkdir -p "$U/sa-demo.service.d"
	printf '[Unit]\nDescription=drop-in check\n[Service]\nExecStart=/bin/true\n' >"$U/sa-demo.service"
	awk -v h="$2" 'index($0, h) == 1 {f=1; next} f && /^    \[Service\]/ {b=1} b && /^    / {print substr($0, 5); next} b {exit}' \
		"$1" >"$U/sa-demo.service.d/override.conf"
	out=$(cd "$U" && SYSTEMD_UNIT_PATH="$U:" systemd-analyze verify --man=no "$U/sa-demo.service" 2>&1)
	if [ $? = 0 ] && grep -q '^Environment=LD_PRELOAD=.*libsockaudit.so' "$U/sa-demo.service.d/override.conf" &&
	   grep -q '^Environment=SOCKAUDIT_LOG=.*%%p' "$U/sa-demo.service.d/override.conf" &&
	   ! echo "$out" | grep -qi "override.conf"; then
		ok "the drop-in in $(basename "$1") passes systemd-analyze verify ($(grep -c . "$U/sa-demo.service.d/override.conf") lines)"
	else fail "the drop-in in $(basename "$1") passes systemd-analyze verify" "$(echo "$out" | head -3) / $(tr '\n' ' ' <"$U/sa-demo.service.d/override.conf")"; fi
}
if command -v systemd-analyze >/dev/null 2>&1; then
	dropin_check "$readme" "## Running it as a service"
	dropin_check "$docs/configuration.md" "### Under systemd: a drop-in"
else
	fail "the drop-ins pass systemd-analyze verify" "systemd-analyze is not installed (scripts/ensure-deps.sh test installs systemd)"
fi

# --- the man pages render without warnings --------------------------------------------
for page in "$docs/man/sockaudit.1" "$docs/man/libsockaudit.7"; do
	name=${page#$TOP/}
	if [ ! -f "$page" ]; then
		fail "$name exists" "missing"
		continue
	fi
	if ! command -v man >/dev/null 2>&1; then
		ok "$name: rendering not checked (man is not installed)"
		continue
	fi
	out=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>"$T/man.err")
	rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/man.err" ] && [ "$(echo "$out" | wc -l)" -ge 20 ]; then
		ok "$name renders without warnings ($(echo "$out" | wc -l) lines)"
	else
		fail "$name renders without warnings" "status $rc: $(head -3 "$T/man.err" | tr '\n' ' ')"
	fi
done

finish
