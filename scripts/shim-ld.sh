#!/bin/sh
# scripts/shim-ld.sh: the library's linker script, made from the linker's
# own default script for a shared library (its -Wl,--verbose output), with
# our placements put in:
#   - shim/sa_fork_text.ld's lines inside .text, before its generic
#     *(.text .stub .text.*) line (one .text: valgrind's symbol reader
#     needs that): the code a forked child runs, first;
#   - .rodata (but .rodata.s*: string literals and the SA_COLD_RODATA
#     tables) before .init, so headers, constants and code are one
#     read-only segment; the rest after .text;
#   - the data segment on a page of its own (an ALIGN before
#     DATA_SEGMENT_ALIGN): the zero tables' first page is page-aligned, and
#     a data segment that began inside the text's last page left a hole the
#     loader mprotects at every exec;
#   - shim/sa_proc.ld's zero tables first in the data segment, before
#     .tdata, so that what the loader writes ends it on one page.
# Why each: docs/design.md, "Layout and start cost".
#
# Usage: scripts/shim-ld.sh [--check] OUT -- CC LDFLAGS...
#   writes OUT; with --check, compares what it would write with OUT and
#   exits 1 when they differ. Either way, exits 1 (writing nothing) when a
#   place is not found in the default script, rather than link without it.
set -eu
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
out=$1
shift
[ "${1:-}" = -- ] && shift
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp "${out}.XXXXXX")
trap 'rm -f "$tmp"' EXIT
"$@" -Wl,--verbose -o /dev/null 2>/dev/null | sed -n '/^=======/,/^=======/p' | sed '1d;$d' |
	awk -v text="$top/shim/sa_fork_text.ld" -v proc="$top/shim/sa_proc.ld" '
		/^[ \t]*\.rodata[ \t]+:/ { r++; ro = ro "  .rodata : { *(.rodata .rodata.cst* .gnu.linkonce.r.*) *(.rodata.[!s]*) }\n"; $0 = "  .rodata.str : { *(.rodata.str* .rodata.*) }" }
		/^[ \t]*\.rodata1[ \t]+:/ { ro = ro $0 "\n"; r++; next }
		/^[ \t]*\. = DATA_SEGMENT_ALIGN/ { line[++n] = "  . = ALIGN (CONSTANT (MAXPAGESIZE));"; a++ }
		{ line[++n] = $0 }
		END {
			for (i = 1; i <= n; i++) {
				if (i0 != 1 && line[i] ~ /^[ \t]*\.init[ \t]+:/) { printf "%s", ro; i0 = 1 }
				if (t != 1 && line[i] ~ /^[ \t]*\*\(\.text \.stub \.text\.\*/) { while ((getline l < text) > 0) print l; t = 1 }
				if (p != 1 && line[i] ~ /^[ \t]*\.tdata[ \t]*:/) { while ((getline l < proc) > 0) print l; p = 1 }
				print line[i]
			}
			if (!(t == 1 && p == 1 && i0 == 1 && r == 2 && a == 1)) {
				printf "shim-ld: a place was not found in the default script (fork text %d, zero tables %d, .rodata %d/%d, data align %d)\n", t, p, i0, r, a > "/dev/stderr"
				exit 1
			}
		}' >"$tmp"
if [ $check = 1 ]; then
	cmp -s "$tmp" "$out" || { echo "shim-ld: $out is not what this linker and shim/*.ld make (make it again)" >&2; exit 1; }
	exit 0
fi
mv "$tmp" "$out"
trap - EXIT
