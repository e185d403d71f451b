#!/bin/sh
# PID 1 of the arm64 test machine (scripts/arm64-vm.sh puts this file in its
# root image as /sbin/sa-init and boots the kernel with init=/sbin/sa-init).
# It mounts what programs expect (/proc, /sys, /dev, /dev/pts, /run, /tmp),
# brings up loopback, mounts the host's share (9p over virtio, tag "sa") at
# /sa, runs /sa/job.sh with its output on the console and in /sa/out, writes
# its exit status to /sa/rc and powers the machine off. Nothing else runs:
# no init system, no network beyond lo.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
HOME=/root
export PATH HOME
# The initrd moved /proc, /sys and /dev over already.
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /run/netns /run/lock
mount -o remount,rw /
hostname arm64-vm
ip link set lo up
off() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}
mkdir -p /sa
modprobe 9pnet_virtio 2>/dev/null
modprobe 9p 2>/dev/null
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 sa /sa; then
	echo "sa-init: cannot mount the host's share (9p tag sa)"
	off
fi
if [ -r /sa/env ]; then set -a; . /sa/env; set +a; fi
echo "sa-init: up after $(cut -d' ' -f1 /proc/uptime) s, $(uname -m), $(nproc) cpus, running /sa/job.sh"
cd /sa
# The job's output goes to the console (the host prints it) and to /sa/out.
{ sh /sa/job.sh </dev/null 2>&1; echo $? >/sa/rc; } | tee /sa/out
echo "sa-init: job ended with status $(cat /sa/rc) after $(cut -d' ' -f1 /proc/uptime) s"
cd /
umount /sa
off
