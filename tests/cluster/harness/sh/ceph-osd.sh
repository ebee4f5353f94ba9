#!/bin/bash
# The OSD of one simulated host, started at every power-on like an enabled ceph-osd@<id> unit
# (on a real PVC node systemd starts the OSDs, not PVC):
#
#   ceph-osd.sh <id> <osd uuid> <storage ip>
#
# 1. waits for the host's storage address (systemd's After=network-online.target; with bare links
#    the node services' bring-up puts it on) — the OSD binds it;
# 2. at the first boot creates the OSD as `ceph-volume … create` would: `ceph osd new <uuid> <id>`
#    (retried until the monitors — started by the supervisor — have a quorum), then
#    `ceph-osd --mkfs` (bluestore on the sparse file /var/lib/ceph/osd/ceph-<id>.block);
# 3. execs `ceph-osd -f -i <id>` (same pid: the harness's pidfile stays right).
set -u
ID="$1"
UUID="$2"
IP="$3"
log() { echo "$(date '+%F %T.%3N') ceph-osd.sh osd.$ID: $*"; }
n=0
until ip -4 -o address show | grep -qF " $IP/"; do
  n=$((n + 1))
  if [ $((n % 150)) -eq 1 ]; then log "waiting for the storage address $IP"; fi
  sleep 0.2
done
log "storage address $IP present"
DATA="/var/lib/ceph/osd/ceph-$ID"
if [ ! -e "$DATA/pvc-created" ]; then
  mkdir -p "$DATA"
  n=0
  until ceph --connect-timeout 5 osd new "$UUID" "$ID"; do
    n=$((n + 1))
    log "ceph osd new: no quorum yet (try $n)"
    sleep 1
  done
  rm -rf "${DATA:?}"/* "$DATA.block"
  ceph-osd -i "$ID" --mkfs --osd-uuid "$UUID" || { log "ceph-osd --mkfs failed"; exit 1; }
  : >"$DATA/pvc-created"
  log "created (osd new + mkfs)"
fi
exec ceph-osd -f -i "$ID"
