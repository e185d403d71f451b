#!/bin/sh
# Install the Debian packages a make target needs, saying what it installs.
# Usage: scripts/ensure-deps.sh build|test|daemons|fleet|demo|bench|fuzz|musl|deb|oldlibc|arm64|arm64vm ...
# (test includes daemons: the real programs tests/integration/daemon_*.sh run.)
# Runs as root on a fresh Debian 12 machine with only Debian's registry reachable.
set -u
pkgs=""; arm64=0
# The real daemons tests/integration/daemon_*.sh run plain and under the shim;
# they never start as system services: see policy-rc.d below.
# What `make deb` needs, and the Debian 11 root (debootstrap) and musl
# programs (musl-tools) the old-libc and packaging tests run.
debpkg="dpkg-dev debhelper build-essential fakeroot lintian"
oldlibc="debootstrap musl-tools"
# The engines fleets run that our outputs feed (metrics, journal, imfile tests).
fleet="prometheus prometheus-node-exporter rsyslog systemd"
daemons="haproxy redis-server redis-tools memcached apache2 apache2-utils lighttpd openssh-server openssh-client socat postgresql"
for group in "$@"; do
	case "$group" in
	build) pkgs="$pkgs gcc make pkg-config libc6-dev libjansson-dev" ;;
	test)  pkgs="$pkgs gcc make pkg-config libc6-dev libjansson-dev libcmocka-dev jq python3 curl iproute2 nginx-light procps valgrind binutils openjdk-17-jdk-headless libcap2-bin strace clang libclang-rt-14-dev chromium fonts-dejavu-core wget faketime tmux musl-tools dpkg-dev $daemons $debpkg $oldlibc $fleet" ;;
	# make musl: musl-gcc, and dpkg-source to unpack jansson's source package.
	musl)  pkgs="$pkgs gcc make musl-tools dpkg-dev binutils linux-libc-dev" ;;
	deb)   pkgs="$pkgs gcc make pkg-config libc6-dev libjansson-dev $debpkg" ;;
	oldlibc) pkgs="$pkgs $oldlibc" ;;
	fleet) pkgs="$pkgs $fleet" ;;
	daemons) pkgs="$pkgs $daemons" ;;
	peer)  pkgs="$pkgs python3" ;;
	demo)  pkgs="$pkgs gcc make pkg-config libc6-dev libjansson-dev jq python3 curl iproute2 nginx-light procps" ;;
	bench) pkgs="$pkgs nginx-light wrk strace valgrind procps apache2-utils linux-perf socat iproute2" ;;
	fuzz)  pkgs="$pkgs clang libclang-rt-14-dev" ;;
	# make arm64 (mk/arm64.mk): the cross compiler and arm64's libc; jansson,
	# cmocka and liburing (a test program) from Debian's arm64 archive
	# (multiarch: the :arm64 packages install beside the amd64 ones, libc6
	# too, whose loader qemu-user runs them with), its pkg-config, and
	# qemu-user for a smoke run of the binaries. Never part of test: CI
	# needs none of it.
	arm64) pkgs="$pkgs gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross make dpkg-dev
		libc6:arm64 libjansson-dev:arm64 libcmocka-dev:arm64 liburing-dev:arm64 pkgconf:arm64 qemu-user-static"; arm64=1 ;;
	# make test-arm64, scripts/arm64-run (scripts/arm64-vm.sh): qemu-system-aarch64,
	# debootstrap and qemu-aarch64-static (registered with binfmt_misc by the
	# script) for the arm64 root, mkfs.ext4 for its image, and the cross
	# compiler arm64-run builds a program with. Never part of test.
	arm64vm) pkgs="$pkgs qemu-system-arm qemu-user-static debootstrap e2fsprogs curl gcc-aarch64-linux-gnu libc6-dev-arm64-cross" ;;
	*) echo "ensure-deps: unknown group $group" >&2; exit 2 ;;
	esac
done
# Programs the shim cannot see into, for the tests that it says so: caddy
# (Go makes its own system calls), liburing (io_uring), systemd's
# systemd-socket-activate (an exec that drops LD_PRELOAD).
case " $* " in *" test "*) pkgs="$pkgs caddy liburing-dev systemd" ;; esac
missing=""
for p in $pkgs; do
	case " $missing " in *" $p "*) continue ;; esac
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
# CPython's own test suite (for the peer test) is packaged per Python version.
case " $* " in *" peer "*|*" test "*)
	if [ -x /usr/bin/python3 ]; then
		v=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
		[ -f "/usr/lib/python$v/test/test_socket.py" ] || missing="$missing libpython$v-testsuite"
	fi ;;
esac
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "ensure-deps: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "ensure-deps: installing missing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
# The :arm64 packages need dpkg to know the architecture (multiarch); the
# update below then reads arm64's package lists too.
if [ $arm64 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	echo "ensure-deps: dpkg --add-architecture arm64 (multiarch, for the :arm64 packages)"
	dpkg --add-architecture arm64 || { echo "ensure-deps: dpkg --add-architecture arm64 failed" >&2; exit 1; }
fi
apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null || { echo "ensure-deps: apt-get update failed" >&2; exit 1; }
# policy-rc.d keeps Debian's nginx, haproxy, redis, memcached, apache2, lighttpd and
# ssh packages from starting a system service (port 80, 22, 6379 ...).
prc=/usr/sbin/policy-rc.d; made_prc=0
if [ ! -e $prc ]; then printf '#!/bin/sh\nexit 101\n' > $prc && chmod +x $prc && made_prc=1; fi
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing >/dev/null; rc=$?
[ $made_prc = 1 ] && rm -f $prc
[ $rc = 0 ] || { echo "ensure-deps: apt-get install failed" >&2; exit 1; }
# If python3 was just installed, the testsuite check above could not run: do it now.
case " $* " in *" peer "*|*" test "*)
	v=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	if [ ! -f "/usr/lib/python$v/test/test_socket.py" ]; then
		echo "ensure-deps: installing libpython$v-testsuite"
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "libpython$v-testsuite" >/dev/null || exit 1
	fi ;;
esac
exit 0
