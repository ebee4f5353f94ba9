#!/bin/bash
# PID 1 of one simulated hypervisor host ("the host is powered on while this runs").
#
# Started by host-power.sh as
#   ip netns exec <netns> unshare --mount --propagation private --uts --pid --fork --mount-proc \
#     bash host-init.sh <hostdir>
# so it owns a private mount, UTS and PID namespace inside the host's network namespace.
#
# Contract:
#  - bind-mounts the host's own directories over the libvirt paths listed in <hostdir>/mounts
#    ("<source> <target>" per line; a file source, like the host's /etc/hosts, over a file); the
#    mounts live only in this mount namespace and vanish with it, so power-off needs no unmount;
#  - sets the host name;
#  - writes <hostdir>/run/ready when done;
#  - then only reaps orphans (bash's SIGCHLD handler reaps every child, adopted ones too).
# SIGKILL of this process from the parent namespace kills every process of the host at once:
# that is what "power off" means (the kernel tears the PID namespace down).
set -eu
HOSTDIR="$1"
# shellcheck source=/dev/null
. "$HOSTDIR/host.env"

hostname "$PVC_HOSTNAME"
while read -r src dst; do
  [ -n "$src" ] || continue
  if [ -f "$src" ]; then
    [ -e "$dst" ] || : >"$dst"
  else
    mkdir -p "$src" "$dst"
  fi
  mount --bind "$src" "$dst"
done <"$HOSTDIR/mounts"

trap 'exit 0' TERM INT
: >"$HOSTDIR/run/ready"
while :; do
  sleep 3600 &
  wait $! || true
done
