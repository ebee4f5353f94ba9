#!/bin/bash
# Power switch of one simulated host. Used by the TypeScript harness and by the host's IPMI
# simulator (through chassis-control.sh), so both see one truth.
#
#   host-power.sh <hostdir> status          prints "on" or "off"
#   host-power.sh <hostdir> on              boots the host: PID-1 anchor, then every service (after
#                                           <hostdir>/post-delay-ms, if set: a firmware's POST)
#   host-power.sh <hostdir> off             SIGKILLs the host's PID 1 (= pulling the plug); with bare
#                                           links also clears its network state (see reset_network)
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

# With bare links (PVC_BARE_LINKS=1 in host.env) the node's bring-up configures the host's network:
# bridges over cluster/storage/upstream, addresses, routes, an nftables ruleset and some sysctls.
# Those live in the network namespace, which outlives the host's PID 1, so a power-off clears them
# as a reboot would: the next power-on finds bare links again. The ipmi link (the BMC's) is kept.
NET_DEFAULTS="$HOSTDIR/run/net-sysctl-defaults"
SYSCTL_KEYS='^net\.ipv4\.ip_forward |^net\.ipv6\.conf\.all\.forwarding |^net\.ipv[46]\.conf\.(all|default|cluster|storage|upstream)\.(send_redirects|accept_source_route|rp_filter) '

# Records, once (at the first power-on, on a fresh namespace), the sysctls bring-up may change.
snapshot_network() {
  [ "${PVC_BARE_LINKS:-0}" = 1 ] || return 0
  [ -s "$NET_DEFAULTS" ] && return 0
  ip netns exec "$PVC_NETNS" sysctl -a 2>/dev/null | grep -E "$SYSCTL_KEYS" >"$NET_DEFAULTS.tmp" || true
  mv "$NET_DEFAULTS.tmp" "$NET_DEFAULTS"
}

reset_network() {
  local link
  [ "${PVC_BARE_LINKS:-0}" = 1 ] || return 0
  for link in $(ip -n "$PVC_NETNS" -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'); do
    case "$link" in
      lo | cluster | storage | upstream | ipmi) ;;
      *) ip -n "$PVC_NETNS" link del "$link" 2>/dev/null || true ;;
    esac
  done
  for link in cluster storage upstream; do
    ip -n "$PVC_NETNS" link set "$link" down 2>/dev/null || true
    ip -n "$PVC_NETNS" link set "$link" nomaster mtu 1500 2>/dev/null || true
    ip -n "$PVC_NETNS" addr flush dev "$link" 2>/dev/null || true
  done
  ip netns exec "$PVC_NETNS" nft flush ruleset 2>/dev/null || true
  if [ -s "$NET_DEFAULTS" ]; then ip netns exec "$PVC_NETNS" sysctl -q -p "$NET_DEFAULTS" >/dev/null 2>&1 || true; fi
}

# Starts every service of the host; $1 is the host's PID 1, or empty when this runs inside the host.
start_services() {
  local pid="$1" f name
  local enter=()
  [ -n "$pid" ] && enter=(nsenter -t "$pid" -m -u -n -p --)
  for f in "$HOSTDIR"/services/*.sh; do
    [ -e "$f" ] || continue
    name="$(basename "$f" .sh)"
    name="${name#[0-9][0-9]-}"
    "${enter[@]}" setsid -f bash "$f" </dev/null >>"$HOSTDIR/log/$name.log" 2>&1
    log "started service $name"
  done
}

power_on() {
  local anchor child="" i
  if init_pid >/dev/null; then return 0; fi
  mkdir -p "$HOSTDIR/run" "$HOSTDIR/log"
  rm -f "$HOSTDIR/run/ready" "$PIDFILE"
  snapshot_network
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
  # A firmware POST (benches): <hostdir>/post-delay-ms holds how long after power-on the services
  # start. The power state is "on" at once, as a real BMC reports it.
  local post_ms=""
  [ -r "$HOSTDIR/post-delay-ms" ] && post_ms="$(tr -dc 0-9 <"$HOSTDIR/post-delay-ms")"
  if [ -n "$post_ms" ] && [ "$post_ms" -gt 0 ]; then
    # The waiting process lives inside the host, so a power-off meanwhile kills it with the rest.
    log "POST: services start in $post_ms ms"
    nsenter -t "$child" -m -u -n -p -- setsid -f bash "$SHDIR/host-power.sh" "$HOSTDIR" post-boot "$post_ms" </dev/null >/dev/null 2>&1
    return 0
  fi
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
  reset_network
  log "power off (killed pid 1 = $pid)"
}

case "$ACTION" in
  status) if init_pid >/dev/null; then echo on; else echo off; fi ;;
  on) power_on ;;
  off) power_off ;;
  reset) power_off && power_on ;;
  post-boot)
    # Inside the host (see power_on): the firmware's POST, then the services.
    sleep "$(awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }')"
    start_services ""
    ;;
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
