#!/bin/sh
# A real arm64 Linux kernel under qemu-system-aarch64 (TCG: no KVM here) to
# run things the library reads from the kernel, where qemu-user cannot help
# (it truncates TCP_INFO to 4 bytes, for one).
#   scripts/arm64-vm.sh setup BUILD_DIR         build the machine once, reuse it after
#   scripts/arm64-vm.sh run BUILD_DIR SHARE     boot, run SHARE/job.sh there, power off
# The machine lives in BUILD_DIR/arm64-vm: root/ (a Debian 12 arm64 root made
# with debootstrap --foreign, its second stage run chrooted under
# qemu-aarch64-static through binfmt_misc), root.img (that root as an ext4
# image), vmlinuz and initrd.img (Debian's linux-image-arm64, from the root).
# `run` boots it with -M virt, 2 vCPUs, 2 GB, the image read-only
# (-snapshot: every run starts from the same disk), SHARE as a 9p share;
# scripts/arm64-vm-init.sh is PID 1 there: it runs SHARE/job.sh, its output on
# the console (printed here) and in SHARE/out, its status in SHARE/rc.
# run's status: the job's; 124 when ARM64_VM_TIMEOUT (seconds, default 3600)
# ran out first; 125 when the machine ended without writing a status.
# Packages: scripts/ensure-deps.sh arm64vm. Times: docs/testing.md.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?usage: arm64-vm.sh setup|run BUILD_DIR [SHARE]}
build=${2:?usage: arm64-vm.sh setup|run BUILD_DIR [SHARE]}
dir=$build/arm64-vm
# What the guest holds beyond minbase: the kernel, and what the tests that
# run there call (tests/arm64/groups): jq, python3, iproute2 (ip netns, ss),
# nginx-light, haproxy, systemd (systemd-socket-activate), curl, wget, strace, gcc and musl-gcc (launcher tests compile
# a program there), the library's and launcher's runtime (libjansson4) and
# the unit tests' (libcmocka0).
PKGS=linux-image-arm64,kmod,systemd,haproxy,jq,python3,iproute2,procps,psmisc,nginx-light,curl,wget,strace,gcc,libc6-dev,musl-tools,libjansson4,libcmocka0,bc,bsdextrautils,util-linux,libcap2-bin
# The image's version: a change to the package list or to the init rebuilds
# the root (the package list) or the image only (the init).
ROOT_ID=$(printf '%s\n' "$PKGS" | cksum | cut -d' ' -f1)

mirror_from_apt() {   # the first Debian archive URI of this machine's apt sources
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) { print $i; break } }' "$f"
	done
}

# binfmt_misc: aarch64 programs in the chroot run under qemu-aarch64-static.
# Registered from qemu-user-static's own binfmt.d file (flag F: the
# interpreter is opened now, so it needs not exist inside the chroot).
binfmt() {
	b=/proc/sys/fs/binfmt_misc
	[ -e $b/register ] || mount -t binfmt_misc binfmt_misc $b || { echo "arm64-vm: cannot mount binfmt_misc"; return 1; }
	[ -e $b/qemu-aarch64 ] && return 0
	conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	[ -f $conf ] || { echo "arm64-vm: $conf missing (scripts/ensure-deps.sh arm64vm: qemu-user-static)"; return 1; }
	cat $conf >$b/register || { echo "arm64-vm: registering $conf with binfmt_misc failed"; return 1; }
	echo "arm64-vm: registered qemu-aarch64 with binfmt_misc"
}

make_root() {
	[ -f "$dir/root.id" ] && [ "$(cat "$dir/root.id")" = "$ROOT_ID" ] && [ -x "$dir/root/sbin/init" -o -x "$dir/root/bin/sh" ] && return 0
	[ "$(id -u)" = 0 ] || { echo "arm64-vm: needs root (debootstrap, chroot, binfmt_misc)"; return 1; }
	mirror=""
	for m in $(mirror_from_apt); do
		case "$m" in *security*) continue ;; esac
		m=${m%/}
		if curl -fsS -o /dev/null --max-time 15 "$m/dists/bookworm/Release" 2>/dev/null; then mirror=$m; break; fi
	done
	[ -n "$mirror" ] || { echo "arm64-vm: no apt source of this machine serves dists/bookworm"; return 1; }
	binfmt || return 1
	start=$(date +%s)
	rm -rf "$dir/root" "$dir/root.tmp" "$dir/root.id" "$dir/root.img"
	echo "arm64-vm: debootstrap --arch=arm64 from $mirror (first stage), log in $dir/debootstrap.log"
	debootstrap --arch=arm64 --variant=minbase --foreign --include="$PKGS" bookworm "$dir/root.tmp" "$mirror" \
		>"$dir/debootstrap.log" 2>&1 || { echo "arm64-vm: debootstrap failed:"; tail -5 "$dir/debootstrap.log"; return 1; }
	s1=$(date +%s)
	echo "arm64-vm: second stage, chrooted under qemu-aarch64-static ($((s1 - start)) s so far)"
	# The initrd holds only what this machine boots from (virtio over PCI,
	# the ext4 root): MODULES=most makes update-initramfs copy some 3,000
	# modules one emulated process at a time.
	mkdir -p "$dir/root.tmp/etc/initramfs-tools/conf.d" "$dir/root.tmp/etc/initramfs-tools/hooks"
	printf 'MODULES=list\nCOMPRESS=gzip\n' >"$dir/root.tmp/etc/initramfs-tools/conf.d/sa-vm"
	cat >"$dir/root.tmp/etc/initramfs-tools/hooks/sa-vm" <<'HOOK'
#!/bin/sh
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
for m in virtio_pci virtio_mmio virtio_blk crc32c_generic libcrc32c ext4; do force_load $m; done
HOOK
	chmod +x "$dir/root.tmp/etc/initramfs-tools/hooks/sa-vm"
	# No service starts inside the chroot (nginx's postinst would try).
	printf '#!/bin/sh\nexit 101\n' >"$dir/root.tmp/usr/sbin/policy-rc.d"
	chmod +x "$dir/root.tmp/usr/sbin/policy-rc.d"
	chroot "$dir/root.tmp" /debootstrap/debootstrap --second-stage >>"$dir/debootstrap.log" 2>&1 ||
		{ echo "arm64-vm: second stage failed:"; tail -5 "$dir/debootstrap.log"; return 1; }
	ls "$dir/root.tmp"/boot/vmlinuz-* "$dir/root.tmp"/boot/initrd.img-* >/dev/null 2>&1 ||
		{ echo "arm64-vm: the root has no kernel or initrd in /boot"; return 1; }
	printf '127.0.0.1\tlocalhost arm64-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$dir/root.tmp/etc/hosts"
	echo arm64-vm >"$dir/root.tmp/etc/hostname"
	rm -rf "$dir/root.tmp"/var/cache/apt/archives/*.deb "$dir/root.tmp"/var/lib/apt/lists/*
	mv "$dir/root.tmp" "$dir/root"
	echo "$ROOT_ID" >"$dir/root.id"
	secs=$(($(date +%s) - start))
	echo "$secs" >"$dir/root.secs"
	echo "arm64-vm: root built in ${secs} s (first stage $((s1 - start)) s), $(du -sm "$dir/root" | cut -f1) MB"
}

make_image() {
	init_id=$(cksum <"$here/arm64-vm-init.sh" | cut -d' ' -f1)
	[ -f "$dir/root.img" ] && [ "$(cat "$dir/image.id" 2>/dev/null)" = "$ROOT_ID.$init_id" ] && return 0
	command -v mkfs.ext4 >/dev/null || { echo "arm64-vm: mkfs.ext4 missing (e2fsprogs)"; return 1; }
	install -m 0755 "$here/arm64-vm-init.sh" "$dir/root/sbin/sa-init"
	k=$(ls "$dir/root"/boot/vmlinuz-* | sort -V | tail -1)
	cp "$k" "$dir/vmlinuz"
	cp "$dir/root/boot/initrd.img-${k##*/vmlinuz-}" "$dir/initrd.img"
	# The root's size and 1 GB for what the tests write there.
	mb=$(($(du -sm "$dir/root" | cut -f1) + 1024))
	rm -f "$dir/root.img"
	truncate -s "${mb}M" "$dir/root.img.tmp"
	mkfs.ext4 -q -F -L sa-arm64 -d "$dir/root" "$dir/root.img.tmp" ||
		{ echo "arm64-vm: mkfs.ext4 -d failed"; rm -f "$dir/root.img.tmp"; return 1; }
	mv "$dir/root.img.tmp" "$dir/root.img"
	echo "$ROOT_ID.$init_id" >"$dir/image.id"
	echo "arm64-vm: image $dir/root.img (${mb} MB), kernel ${k##*/vmlinuz-}"
}

case "$cmd" in
setup)
	mkdir -p "$dir"
	exec 9>"$dir/lock"
	flock 9
	make_root && make_image
	;;
run)
	share=${3:?usage: arm64-vm.sh run BUILD_DIR SHARE}
	[ -f "$share/job.sh" ] || { echo "arm64-vm: $share/job.sh missing"; exit 2; }
	[ -f "$dir/root.img" ] || { echo "arm64-vm: no machine in $dir (scripts/arm64-vm.sh setup $build)"; exit 2; }
	command -v qemu-system-aarch64 >/dev/null || { echo "arm64-vm: qemu-system-aarch64 missing (scripts/ensure-deps.sh arm64vm)"; exit 2; }
	rm -f "$share/rc" "$share/out"
	# Runs share the image read-only (snapshot=on), so they may run side by side.
	exec 9>"$dir/lock"
	flock -s 9
	start=$(date +%s)
	# -cpu max with pauth-impdef: every feature qemu emulates (LSE atomics,
	# pointer authentication, BTI, as a recent core has), with qemu's own
	# cheap pointer-authentication hash instead of the architected one
	# (which costs TCG dearly).
	rm -f "$share/.qrc"
	{ timeout -k 10 "${ARM64_VM_TIMEOUT:-3600}" qemu-system-aarch64 \
		-M virt -cpu max,pauth-impdef=on -smp 2 -m 2G -accel tcg,thread=multi \
		-display none -monitor none -serial stdio -no-reboot -nic none \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "console=ttyAMA0 root=/dev/vda rw init=/sbin/sa-init quiet loglevel=3 panic=-1" \
		-drive file="$dir/root.img",if=virtio,format=raw,snapshot=on \
		-device virtio-rng-pci \
		-virtfs local,path="$share",mount_tag=sa,security_model=none,id=sa \
		</dev/null; echo $? >"$share/.qrc"; } | tr -d '\r'
	qrc=$(cat "$share/.qrc" 2>/dev/null); rm -f "$share/.qrc"
	secs=$(($(date +%s) - start))
	echo "arm64-vm: machine ran ${secs} s"
	[ -f "$share/rc" ] && exit "$(cat "$share/rc")"
	[ "$qrc" = 124 ] && { echo "arm64-vm: timed out after ${ARM64_VM_TIMEOUT:-3600} s"; exit 124; }
	echo "arm64-vm: the machine stopped without a job status"
	exit 125
	;;
*) echo "usage: arm64-vm.sh setup|run BUILD_DIR [SHARE]"; exit 2 ;;
esac
