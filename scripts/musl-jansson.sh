#!/bin/sh
# musl-jansson.sh DIR: builds jansson for musl (a static, position-
# independent libjansson.a and its headers in DIR/lib, DIR/include) from
# Debian's jansson source package, fetched with apt like any other input.
# No Debian package ships a musl jansson, and the tree carries no copy.
#
# apt-get source needs a deb-src entry: this one is derived at run time from
# the machine's own apt sources (each enabled "deb" entry as "deb-src"), in
# a private apt state under DIR, so that the system's apt is left as it was
# and no registry host is written anywhere in the tree. Kept under DIR:
# built once, reused.
set -eu
DIR=$1
CC_MUSL=${MUSL_CC:-musl-gcc}
[ -f "$DIR/lib/libjansson.a" ] && [ -f "$DIR/include/jansson.h" ] && exit 0
command -v "$CC_MUSL" >/dev/null || { echo "musl-jansson: $CC_MUSL not found (Debian's musl-tools)" >&2; exit 2; }
command -v dpkg-source >/dev/null || { echo "musl-jansson: dpkg-source not found (Debian's dpkg-dev)" >&2; exit 2; }
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
A=$DIR/apt
rm -rf "$A" "$DIR/src"
mkdir -p "$A/parts" "$A/lists/partial" "$A/cache/archives/partial" "$DIR/src"

# The machine's enabled sources, as source entries.
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"
done >"$A/parts/src.list"
n=0
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	sed 's/^Types:.*/Types: deb-src/' "$f" >"$A/parts/src$n.sources"
done
[ -s "$A/parts/src.list" ] || rm -f "$A/parts/src.list"
ls "$A/parts" | grep -q . || { echo "musl-jansson: no apt sources on this machine" >&2; exit 1; }

apt_o="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$A/parts -o Dir::State::Lists=$A/lists
	-o Dir::Cache=$A/cache -o Debug::NoLocking=1 -o APT::Sandbox::User=root -q"
# shellcheck disable=SC2086
apt-get $apt_o update >"$A/update.log" 2>&1 || echo "musl-jansson: apt-get update reported errors (see $A/update.log); trying the source anyway" >&2
# shellcheck disable=SC2086
(cd "$DIR/src" && apt-get $apt_o source jansson >"$A/source.log" 2>&1) ||
	{ echo "musl-jansson: apt-get source jansson failed:" >&2; tail -n 5 "$A/source.log" >&2; exit 1; }
S=$(ls -d "$DIR"/src/jansson-*/ | head -n 1)
[ -f "$S/src/jansson.h" ] || { echo "musl-jansson: no jansson source in $DIR/src" >&2; exit 1; }

# jansson's two configuration headers, as its configure script would write
# them on Linux with musl (every header and function below is in musl).
B=$DIR/build
rm -rf "$B"
mkdir -p "$B" "$DIR/lib" "$DIR/include"
sed -e 's/@json_inline@/inline/' -e 's/@json_have_long_long@/1/' -e 's/@json_have_localeconv@/1/' \
	-e 's/@json_have_atomic_builtins@/1/' -e 's/@json_have_sync_builtins@/1/' \
	"$S/src/jansson_config.h.in" >"$B/jansson_config.h"
cat >"$B/jansson_private_config.h" <<'H'
#define HAVE_ENDIAN_H 1
#define HAVE_FCNTL_H 1
#define HAVE_SCHED_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_PARAM_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_CLOSE 1
#define HAVE_GETPID 1
#define HAVE_GETTIMEOFDAY 1
#define HAVE_OPEN 1
#define HAVE_READ 1
#define HAVE_SCHED_YIELD 1
#define HAVE_SYNC_BUILTINS 1
#define HAVE_ATOMIC_BUILTINS 1
#define HAVE_LOCALECONV 1
#define USE_URANDOM 1
#define INITIAL_HASHTABLE_ORDER 3
H
for c in "$S"/src/*.c; do
	"$CC_MUSL" -std=gnu99 -O2 -fPIC -fvisibility=hidden -DHAVE_CONFIG_H -I"$B" -I"$S/src" \
		-c -o "$B/$(basename "$c" .c).o" "$c"
done
ar rcs "$DIR/lib/libjansson.a" "$B"/*.o
cp "$S/src/jansson.h" "$B/jansson_config.h" "$DIR/include/"
echo "musl-jansson: built $DIR/lib/libjansson.a from $(basename "$S")"
