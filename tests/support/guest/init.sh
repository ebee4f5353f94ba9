#!/bin/busybox sh
# /init of the tiny test guest (busybox initramfs, no disk, no network).
# Prints "pvc-guest <name> tick <n>" to the console (console=ttyS0) once a second; <name> comes
# from the kernel command line "pvc.name=<name>" (the domain name). Changing this file changes the
# cache key of the built image.
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin /sbin /usr/bin /usr/sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/bin/busybox --install -s
name=guest
for arg in $(cat /proc/cmdline); do
  case "$arg" in pvc.name=*) name="${arg#pvc.name=}" ;; esac
done
hostname "$name"
echo "pvc-guest $name up"
n=0
while :; do
  echo "pvc-guest $name tick $n"
  n=$((n + 1))
  sleep 1
done
