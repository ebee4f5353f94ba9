#!/bin/bash
# Power switch of one simulated host. Used by the TypeScript harness and by the host's IPMI
# simulator (through chassis-control.sh), so both see one truth.
#
#   host-power.sh <hostdir> status          prints "on" or "off"
#   host-power.sh <hostdir> on              boots the host: PID-1 anchor, then every service
#   host-power.sh <hostdir> off             SIGKILLs the host's PID 1 (= pulling the plug)
#   host-power.sh <hostdir> reset           off, then on
#   host-power.sh <hostdir> exec CMD ARGS…  runs CMD inside the host (exit 111 when powered off)
#
# The host is "on" exactly while the process recorded in <hostdir>/run/init.pid is alive, not a
# zombie, and is host-init.sh for this host dir. Services are <hostdir>/services/*.sh, started in
# name order; each runs in the foreground (its pid 1 adopts it), its output in <hostdir>/log/.
# Nothing here writes to stdout except "status": ipmi_sim reads this script's output.
set -eu
HOSTDIR="$1"
ACTION="$2"
shift 2
# shellcheck source=/dev/null
. "$HOSTDIR/host.env"
SHDIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PIDFILE="$HOSTDIR/run/init.pid"

# Prints the pid of the host's live PID 1, or fails.
init_pid() {
  local pid state
  [ -s "$PIDFILE" ] || return 1
  pid="$(cat "$PIDFILE")"
  [ -r "/proc/$pid/stat" ] || return 1
  state="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "host-init.sh $HOSTDIR " || return 1
  echo "$pid"
}

log() { echo "$(date '+%F %T.%3N') $*" >>"$HOSTDIR/log/power.log"; }

start_services() {
  local pid="$1" f name
  for f in "$HOSTDIR"/services/*.sh; do
    [ -e "$f" ] || continue
    name="$(basename "$f" .sh)"
    name="${name#[0-9][0-9]-}"
    nsenter -t "$pid" -m -u -n -p -- setsid -f bash "$f" </dev/null >>"$HOSTDIR/log/$name.log" 2>&1
    log "started service $name"
  done
}

power_on() {
  local anchor child="" i
  if init_pid >/dev/null; then return 0; fi
  mkdir -p "$HOSTDIR/run" "$HOSTDIR/log"
  rm -f "$HOSTDIR/run/ready" "$PIDFILE"
  rm -rf "$HOSTDIR/run/svc"
  mkdir -p "$HOSTDIR/run/svc"
  setsid ip netns exec "$PVC_NETNS" unshare --mount --propagation private --uts --pid --fork \
    --mount-proc bash "$SHDIR/host-init.sh" "$HOSTDIR" </dev/null >>"$HOSTDIR/log/init.log" 2>&1 &
  anchor=$!
  for i in $(seq 1 200); do
    child="$(cut -d' ' -f1 "/proc/$anchor/task/$anchor/children" 2>/dev/null || true)"
    if [ -n "$child" ] && [ -e "$HOSTDIR/run/ready" ]; then break; fi
    sleep 0.05
  done
  if [ -z "$child" ] || [ ! -e "$HOSTDIR/run/ready" ]; then
    echo "host $PVC_HOSTNAME did not boot: PID 1 not ready after 10 s (see $HOSTDIR/log/init.log)"
    kill -KILL "$anchor" 2>/dev/null || true
    return 1
  fi
  echo "$child" >"$PIDFILE"
  echo "$anchor" >"$HOSTDIR/run/anchor.pid"
  log "power on (pid 1 = $child)"
  start_services "$child"
}

power_off() {
  local pid i
  pid="$(init_pid)" || return 0
  kill -KILL "$pid"
  for i in $(seq 1 200); do
    init_pid >/dev/null || break
    sleep 0.05
  done
  if init_pid >/dev/null; then
    echo "host $PVC_HOSTNAME: PID 1 ($pid) survived SIGKILL"
    return 1
  fi
  rm -f "$PIDFILE" "$HOSTDIR/run/ready"
  log "power off (killed pid 1 = $pid)"
}

case "$ACTION" in
  status) if init_pid >/dev/null; then echo on; else echo off; fi ;;
  on) power_on ;;
  off) power_off ;;
  reset) power_off && power_on ;;
  exec)
    if ! pid="$(init_pid)"; then
      echo "host $PVC_HOSTNAME is powered off" >&2
      exit 111
    fi
    exec nsenter -t "$pid" -m -u -n -p -- "$@"
    ;;
  *)
    echo "usage: host-power.sh <hostdir> status|on|off|reset|exec CMD…"
    exit 2
    ;;
esac
