#!/bin/sh
# check-abi.sh: the C libraries a built file can load with, read from its
# dynamic symbol table (objdump -T).
#
#   scripts/check-abi.sh [--floor 2.17] FILE...     glibc files
#   scripts/check-abi.sh --musl LIBC.so FILE...     files for a musl process
#
# A glibc file passes when no symbol it needs has a version above the floor
# and none is GLIBC_PRIVATE: glibc's loader ends a program at start-up
# ("version 'GLIBC_2.34' not found") when a preload needs a newer version
# than its libc has. A musl file passes when it needs no glibc version at all
# and every strong undefined symbol is defined by musl's libc.so (musl's
# loader fails on each missing one: "Error relocating ...: symbol not
# found"). Prints one line per file, the offending symbols after it; exits 1
# when any file fails.
set -u
floor=2.17
musl_libc=
while [ $# -gt 0 ]; do
	case $1 in
	--floor) floor=$2; shift 2 ;;
	--musl) musl_libc=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--floor X.Y | --musl LIBC.so] FILE..." >&2; exit 2; }
command -v objdump >/dev/null || { echo "check-abi: objdump not found (binutils)" >&2; exit 2; }

# "1" when version a (X.Y[.Z]) is above b.
above() {
	[ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]
}

rc=0
for f in "$@"; do
	if [ ! -f "$f" ]; then
		echo "FAIL $f: no such file"
		rc=1
		continue
	fi
	# objdump -T: "ADDR FLAGS SECTION SIZE VERSION NAME"; an undefined
	# symbol's version is in parentheses when it is not the default one.
	dyn=$(objdump -T "$f" 2>/dev/null) || { echo "FAIL $f: objdump -T failed"; rc=1; continue; }
	vers=$(printf '%s\n' "$dyn" | grep -oE '\(?GLIBC_[0-9.]+\)?|GLIBC_PRIVATE' | tr -d '()' | sort -u)
	if [ -z "$musl_libc" ]; then
		ceiling=$(printf '%s\n' "$vers" | grep -E '^GLIBC_[0-9.]+$' | sed 's/^GLIBC_//' | sort -V | tail -n 1)
		bad=""
		for v in $vers; do
			case $v in
			GLIBC_PRIVATE) bad="$bad $v" ;;
			GLIBC_*) above "${v#GLIBC_}" "$floor" && bad="$bad $v" ;;
			esac
		done
		if [ -z "$bad" ]; then
			echo "ok   $f: highest version GLIBC_${ceiling:-none} (floor GLIBC_$floor)"
		else
			rc=1
			echo "FAIL $f: highest version GLIBC_$ceiling, above the floor GLIBC_$floor:"
			for v in $bad; do
				printf '%s\n' "$dyn" | awk -v v="$v" '{ for (i = 1; i <= NF; i++) if ($i == v || $i == "(" v ")") print "       " $NF "@" v }'
			done
		fi
	else
		have=$(objdump -T "$musl_libc" | awk '!/\*UND\*/ && NF >= 6 { print $NF }' | sort -u)
		# Strong undefined symbols only: a weak one musl lacks is left
		# at 0 (crtbegin's __cxa_finalize, _ITM_*, __gmon_start__).
		need=$(printf '%s\n' "$dyn" | awk '/\*UND\*/ && $2 != "w" { print $NF }' | sort -u)
		missing=$(printf '%s\n' "$need" | grep -vxF "$have" | grep -v '^$')
		glibc=$(printf '%s\n' "$vers" | grep -v '^$')
		if [ -z "$missing" ] && [ -z "$glibc" ]; then
			echo "ok   $f: every symbol it needs is in $musl_libc"
		else
			rc=1
			echo "FAIL $f: needs what musl's $musl_libc lacks:"
			for s in $missing; do echo "       $s"; done
			for v in $glibc; do echo "       version $v"; done
		fi
	fi
done
exit $rc
