#!/bin/sh
# Builds, once, the Debian 11 (bullseye, glibc 2.31) minbase root with python3
# that the old-glibc tests run programs in, and reuses it afterwards.
# Usage: scripts/deb11-root.sh BUILD_DIR      (the root is BUILD_DIR/deb11/root)
# The mirror is the one this machine's own apt sources use, read at run time.
# Exit 0: the root is there. Exit 3: it cannot be built here (no registry, no
# debootstrap, not root), with one line on stdout saying why.
set -u
build=${1:?usage: deb11-root.sh BUILD_DIR}
dir=$build/deb11
root=$dir/root
mkdir -p "$dir"
exec 9>"$dir/lock"
flock 9          # one builder; tests wait here while it runs
[ -x "$root/usr/bin/python3" ] && [ -f "$dir/built" ] && exit 0
[ "$(id -u)" = 0 ] || { echo "deb11 root: needs root for debootstrap and chroot"; exit 3; }
command -v debootstrap >/dev/null || { echo "deb11 root: debootstrap is not installed (scripts/ensure-deps.sh oldlibc)"; exit 3; }

# The first Debian archive URI of this machine's apt sources (deb822 or
# one-line format), leaving out the security archive.
mirror_from_apt() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) { print $i; break } }' "$f"
	done
}
mirror=""
for m in $(mirror_from_apt); do
	case "$m" in *security*) continue ;; esac
	m=${m%/}
	if curl -fsS -o /dev/null --max-time 15 "$m/dists/bullseye/Release" 2>/dev/null; then mirror=$m; break; fi
done
[ -n "$mirror" ] || { echo "deb11 root: no apt source of this machine serves dists/bullseye (registry unreachable?)"; exit 3; }

rm -rf "$root.tmp"
start=$(date +%s)
if ! debootstrap --variant=minbase --include=python3 bullseye "$root.tmp" "$mirror" >"$dir/debootstrap.log" 2>&1; then
	echo "deb11 root: debootstrap from $mirror failed (tail of $dir/debootstrap.log:)"
	tail -3 "$dir/debootstrap.log" | sed 's/^/  /'
	rm -rf "$root.tmp"
	exit 3
fi
# What a test may not need and would only copy around: apt's downloaded .debs.
rm -rf "$root.tmp"/var/cache/apt/archives/*.deb
rm -rf "$root"
mv "$root.tmp" "$root"
secs=$(( $(date +%s) - start ))
echo "$secs" >"$dir/built"
echo "deb11 root: built in ${secs}s from $mirror ($(du -sm "$root" | cut -f1) MB)"
