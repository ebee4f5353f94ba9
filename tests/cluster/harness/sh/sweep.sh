#!/bin/bash
# Removes everything a harness cluster may have left behind, by cluster name:
#   network namespaces "<name>-hvN" (after SIGKILLing every process in them, which also tears
#   down each host's PID and mount namespaces and their bind mounts), bridges
#   "<name>-cluster|storage|upstream|ipmi", veths "<name>-N-[csui]", the work directory recorded in
#   /run/pvc-cluster/<name>/workdir (only if it carries the harness marker naming this cluster) and
#   that registry entry. The guest image cache is kept.
#
#   sweep.sh <name>…     sweep.sh --all   (every cluster in /run/pvc-cluster)
# Idempotent; prints one line per thing removed.
set -u
REGISTRY=/run/pvc-cluster

# Only names the harness makes: netns <name>-hvN, bridges <name>-<network>, veths <name>-N-[csui].
ours() {
  [[ "$2" =~ ^$1-(hv[0-9]+|cluster|storage|upstream|ipmi|[0-9]+-[csui])$ ]]
}

sweep_one() {
  local name="$1" ns pids pass link wd
  if ! [[ "$name" =~ ^[a-z][a-z0-9]{0,5}$ ]]; then
    echo "sweep: refusing invalid cluster name '$name' (want [a-z][a-z0-9]{0,5})" >&2
    return 2
  fi
  for pass in 1 2 3 4 5 6 7 8 9 10; do
    pids=""
    for ns in $(ip netns list | awk '{print $1}'); do
      ours "$name" "$ns" && pids="$pids $(ip netns pids "$ns" | tr '\n' ' ')"
    done
    pids="$(echo $pids)"
    [ -n "$pids" ] || break
    if [ "$pass" = 1 ]; then
      # Spare the "unshare" parents in the first pass: they reap the host's PID 1 and exit, so
      # no <defunct> host init is left for the machine's PID 1 to collect.
      pids="$(for p in $pids; do [ "$(cat /proc/$p/comm 2>/dev/null)" = unshare ] || echo "$p"; done | tr '\n' ' ')"
      pids="$(echo $pids)"
      [ -n "$pids" ] || continue
    fi
    echo "sweep $name: kill -KILL $pids (pass $pass)"
    kill -KILL $pids 2>/dev/null
    sleep 0.2
  done
  for ns in $(ip netns list | awk '{print $1}'); do
    if ours "$name" "$ns"; then ip netns del "$ns" && echo "sweep $name: deleted netns $ns"; fi
  done
  for link in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'); do
    if ours "$name" "$link"; then ip link del "$link" 2>/dev/null && echo "sweep $name: deleted link $link"; fi
  done
  if [ -s "$REGISTRY/$name/workdir" ]; then
    wd="$(cat "$REGISTRY/$name/workdir")"
    if [ -f "$wd/.pvc-cluster" ] && [ "$(cat "$wd/.pvc-cluster")" = "$name" ]; then
      rm -rf "$wd" && echo "sweep $name: removed $wd"
    fi
  fi
  rm -rf "${REGISTRY:?}/$name"
}

if [ "${1-}" = --all ]; then
  set --
  for d in "$REGISTRY"/*/; do [ -d "$d" ] && set -- "$@" "$(basename "$d")"; done
fi
[ $# -gt 0 ] || { echo "usage: sweep.sh <name>… | --all" >&2; exit 2; }
rc=0
for n in "$@"; do sweep_one "$n" || rc=$?; done
exit $rc
