#!/bin/bash
# OpenIPMI ipmi_sim "chassis_control" program of one simulated host.
#
# lan.conf holds:   chassis_control "<this script> <hostdir> 0x20"
# ipmi_sim appends the request, so this script is called as
#   chassis-control.sh <hostdir> <mc> get <parm>…          e.g. get power
#   chassis-control.sh <hostdir> <mc> set <parm> <val>…    e.g. set power 0 | set reset 1
#   chassis-control.sh <hostdir> <mc> check …              (not supported: exit 1)
#
# Protocol (lanserv/extcmd.c): "get" prints one "<parm>:<value>" line per parameter and exits 0;
# "set" prints nothing and exits 0 on success; on failure it prints the reason to stdout and exits
# non-zero (ipmi_sim then answers "Unspecified error"). power is 1/0; reset 1 is a pulse;
# boot is none|pxe|default|cdrom|bios; identify is "<interval> <force>" in one argument.
set -u
HOSTDIR="$1"
MC="$2"
OP="$3"
shift 3
POWER="$(dirname "${BASH_SOURCE[0]}")/host-power.sh"

log() { echo "$(date '+%F %T.%3N') mc=$MC $*" >>"$HOSTDIR/log/chassis.log"; }
log "$OP $*"

# A slow BMC (tests): <hostdir>/bmc-delay-ms holds a delay applied to every request before it runs.
if [ -r "$HOSTDIR/bmc-delay-ms" ]; then
  DELAY_MS="$(tr -dc 0-9 <"$HOSTDIR/bmc-delay-ms")"
  [ -n "$DELAY_MS" ] && sleep "$(awk -v ms="$DELAY_MS" 'BEGIN { printf "%.3f", ms / 1000 }')"
fi

do_get() {
  local parm state
  for parm in "$@"; do
    case "$parm" in
      power)
        state="$(bash "$POWER" "$HOSTDIR" status 2>>"$HOSTDIR/log/chassis.log")" || state=off
        if [ "$state" = on ]; then echo "power:1"; else echo "power:0"; fi
        ;;
      boot) echo "boot:default" ;;
      *) echo "Invalid parameter: $parm"; exit 1 ;;
    esac
  done
}

# Runs a power action; its diagnostics go to the log, a one-line reason to stdout on failure.
power() {
  if ! bash "$POWER" "$HOSTDIR" "$1" >>"$HOSTDIR/log/chassis.log" 2>&1; then
    echo "power $1 failed for $HOSTDIR (see $HOSTDIR/log/chassis.log)"
    exit 1
  fi
}

do_set() {
  local parm val
  while [ $# -gt 0 ]; do
    parm="$1"
    val="${2-}"
    [ $# -ge 2 ] || { echo "No value present for parameter $parm"; exit 1; }
    shift 2
    case "$parm" in
      power) if [ "$val" = 1 ]; then power on; else power off; fi ;;
      reset) if [ "$val" = 1 ]; then power reset; fi ;;
      shutdown) if [ "$val" = 1 ]; then power off; fi ;;
      boot | identify) ;;
      *) echo "Invalid parameter: $parm"; exit 1 ;;
    esac
  done
}

case "$OP" in
  get) do_get "$@" ;;
  set) do_set "$@" ;;
  *) echo "Unsupported operation: $OP"; exit 1 ;;
esac
exit 0
