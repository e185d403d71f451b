# Helpers for tests that run programs inside the Debian 11 (bullseye, glibc
# 2.31) root that scripts/deb11-root.sh builds once under build/deb11/root.
# Source after tests/lib.sh. Gives:
#   deb11_root NAME   the root in $R, or one "ok - NAME # SKIP why" line and
#                     the script ends (no registry, no debootstrap, not root)
#   in_root CMD...    CMD inside the root: own mount namespace with /proc,
#                     chroot, a clean environment (PATH, HOME); extra
#                     variables as `env` arguments: in_root env A=1 CMD...;
#                     with IN_NETNS=NAME set, inside that network namespace
#   deb11_lock shared|exclusive   the package test installs into the root:
#                     it holds the lock exclusive, the others shared.
R=""
deb11_root() {
	local why
	why=$("$TOP/scripts/deb11-root.sh" "$BUILD" 2>&1)
	case $? in
	0) R=$BUILD/deb11/root ;;
	3) echo "ok - $1 # SKIP $why"; finish ;;
	*) fail "$1: the Debian 11 root builds" "$why"; finish ;;
	esac
}
deb11_lock() {
	exec 8>"$BUILD/deb11/use.lock"
	if [ "$1" = exclusive ]; then flock 8; else flock -s 8; fi
}
in_root() {          # IN_NETNS=name: in that network namespace
	${IN_NETNS:+ip netns exec "$IN_NETNS"} unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --bind /dev "$r/dev" &&
		exec chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"
	' in_root "$R" "$@"
}
