#!/bin/bash
# scripts/lint-format.sh: clang-format (the root .clang-format) in check
# mode, on what a change touches, never rewriting a file.
#
#   scripts/lint-format.sh [BASE]        the C lines changed since BASE's
#                                        merge base (default main), committed
#                                        or not: git clang-format --diff
#   scripts/lint-format.sh -- FILE...    whole files: clang-format --dry-run
#
# The tree was written before .clang-format and is not reformatted
# wholesale, so the check is on changed lines. Prints the lines clang-format
# would change and exits 1 when there are any; exits 2 when clang-format or
# git-clang-format is missing (Debian's clang-format package has both).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2

if [ "${1:-}" = -- ]; then
	shift
	command -v clang-format >/dev/null || { echo "lint-format: clang-format is not installed" >&2; exit 2; }
	[ $# -gt 0 ] || { echo "lint-format: no files" >&2; exit 2; }
	clang-format --style=file --dry-run --Werror "$@"
	exit $?
fi

command -v git-clang-format >/dev/null || { echo "lint-format: git-clang-format is not installed" >&2; exit 2; }
base=${1:-main}
mb=$(git merge-base "$base" HEAD 2>/dev/null) || { echo "lint-format: no merge base with $base" >&2; exit 2; }
out=$(git clang-format --style=file --extensions c,h --diff "$mb" 2>&1)
case $out in
"" | "no modified files to format" | "clang-format did not modify any files")
	echo "lint-format: the C lines changed since $base are formatted as .clang-format says"
	exit 0 ;;
esac
printf '%s\n' "$out"
echo "lint-format: clang-format would change the lines above (changed since $base)" >&2
exit 1
