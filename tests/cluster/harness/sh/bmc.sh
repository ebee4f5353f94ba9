#!/bin/bash
# The simulated BMC of one host: OpenIPMI's ipmi_sim serving IPMI-over-LAN on the host's address
# in the cluster's "ipmi" network. It runs in the host's network namespace but outside the host's
# PID namespace, so it keeps running (and answers "power is off") while the host is powered off.
#
#   bmc.sh <hostdir> start|stop|status
set -eu
HOSTDIR="$1"
ACTION="$2"
# shellcheck source=/dev/null
. "$HOSTDIR/host.env"
PIDFILE="$HOSTDIR/run/bmc.pid"

bmc_pid() {
  local pid
  [ -s "$PIDFILE" ] || return 1
  pid="$(cat "$PIDFILE")"
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ipmi_sim ] || return 1
  grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && return 1
  echo "$pid"
}

listening() {
  ip netns exec "$PVC_NETNS" ss -Hunl "sport = :$PVC_IPMI_PORT" | grep -qF "$PVC_IPMI_IP:$PVC_IPMI_PORT"
}

case "$ACTION" in
  start)
    if bmc_pid >/dev/null; then exit 0; fi
    mkdir -p "$HOSTDIR/run" "$HOSTDIR/log" "$HOSTDIR/bmc/state"
    # A waiting parent outside the namespace reaps ipmi_sim when it is killed, so no <defunct>
    # ipmi_sim lingers (PID 1 of these machines reaps orphans only now and then).
    rm -f "$PIDFILE"
    setsid bash -c 'ip netns exec "$1" ipmi_sim -n -c "$2/bmc/lan.conf" -f "$2/bmc/sim.emu" -s "$2/bmc/state" &
      echo $! >"$3"; wait $!' bmc "$PVC_NETNS" "$HOSTDIR" "$PIDFILE" </dev/null >>"$HOSTDIR/log/bmc.log" 2>&1 &
    for _ in $(seq 1 100); do [ -s "$PIDFILE" ] && break; sleep 0.02; done
    for _ in $(seq 1 100); do
      if listening; then exit 0; fi
      bmc_pid >/dev/null || break
      sleep 0.05
    done
    echo "BMC of $PVC_HOSTNAME did not listen on $PVC_IPMI_IP:$PVC_IPMI_PORT (see $HOSTDIR/log/bmc.log)" >&2
    exit 1
    ;;
  stop)
    if pid="$(bmc_pid)"; then kill -KILL "$pid"; fi
    rm -f "$PIDFILE"
    ;;
  status) if bmc_pid >/dev/null; then echo running; else echo stopped; fi ;;
  *) echo "usage: bmc.sh <hostdir> start|stop|status" >&2; exit 2 ;;
esac
