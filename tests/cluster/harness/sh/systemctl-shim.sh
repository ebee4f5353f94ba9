#!/bin/bash
# `systemctl` of one simulated host (systemd is not PID 1 here): what the node services' supervisor
# runs, through `--systemctl <hostdir>/bin/systemctl`, in its coordinator-service step
# (`systemctl start <unit>`), inside the host's namespaces.
#
#   systemctl-shim.sh <hostdir> start <unit>…
#
# A unit maps to a harness service script by name (`ceph-mon@hv1.service` → `ceph-mon-hv1`):
#  - already running (its pid in <hostdir>/run/svc/<name>.pid is alive) → exit 0, like systemd for
#    an active unit (Zookeeper and libvirtd, which the harness starts at boot);
#  - else <hostdir>/units/<name>.sh (units started only on request: Ceph mon and mgr) or the boot
#    service <hostdir>/services/NN-<name>.sh is started detached, its output in <hostdir>/log/<name>.log,
#    and the shim exits 0 (Type=simple: started, not ready — the supervisor probes readiness);
#  - <hostdir>/units/<name>.stand-in (a service the test cluster does not run, e.g. FRR): exit 0;
#  - otherwise "Unit … not found.", exit 5, as systemctl.
# Every call is logged to <hostdir>/log/systemctl.log. Only `start` is supported.
set -u
HOSTDIR="$1"
shift
log() { echo "$(date '+%F %T.%3N') $*" >>"$HOSTDIR/log/systemctl.log"; }
verb="${1:-}"
[ $# -gt 0 ] && shift
if [ "$verb" != start ]; then
  echo "systemctl (test-cluster shim): only 'start <unit>' is supported, not '$verb $*'" >&2
  log "refused: $verb $*"
  exit 1
fi
if [ $# -eq 0 ]; then
  echo "Too few arguments." >&2
  exit 1
fi
rc=0
for unit in "$@"; do
  base="${unit%.service}"
  name="${base//@/-}"
  pidfile="$HOSTDIR/run/svc/$name.pid"
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    log "start $unit: already running (pid $(cat "$pidfile"))"
    continue
  fi
  script=""
  if [ -e "$HOSTDIR/units/$name.sh" ]; then
    script="$HOSTDIR/units/$name.sh"
  else
    for f in "$HOSTDIR"/services/[0-9][0-9]-"$name".sh; do [ -e "$f" ] && script="$f"; done
  fi
  if [ -z "$script" ]; then
    if [ -e "$HOSTDIR/units/$name.stand-in" ]; then
      log "start $unit: stand-in, not run in the test cluster ($(head -c 200 "$HOSTDIR/units/$name.stand-in"))"
      continue
    fi
    echo "Failed to start $unit: Unit $unit not found." >&2
    log "start $unit: not found"
    rc=5
    continue
  fi
  mkdir -p "$HOSTDIR/run/svc"
  setsid -f bash "$script" </dev/null >>"$HOSTDIR/log/$name.log" 2>&1
  log "start $unit: started $script"
done
exit "$rc"
