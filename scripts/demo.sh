#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine as root:
#   bash scripts/demo.sh up      install + build, bring up a local 3-host cluster (network namespaces, a
#                                libvirtd and an IPMI simulator per host, a 3-server Zookeeper ensemble)
#                                and, with the pvc command, define and start a guest on the first host
#                                and live-migrate it to another host (timed); pvc's default connection
#                                is then this cluster; print what to try next
#   bash scripts/demo.sh migrate live-migrate the guest again with pvc: back to where it came from when
#                                it was migrated (pvc vm unmigrate), else to the next host (pvc vm migrate)
#   bash scripts/demo.sh down    tear everything down
#   bash scripts/demo.sh status  power, libvirtd and Zookeeper quorum of each host
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${PVC_DEMO_NAME:-demo}
CTL=(bash scripts/cluster-ctl.sh)
cmd=${1:-up}

case "$cmd" in
  up)
    bash scripts/setup.sh
    if "${CTL[@]}" status --name "$NAME" 2>/dev/null | grep -q 'zookeeper quorum: yes'; then
      echo "demo: cluster \"$NAME\" is already up; reusing it"
    else
      "${CTL[@]}" down --name "$NAME" >/dev/null 2>&1 || true   # leftovers of an earlier run
      "${CTL[@]}" up --name "$NAME" --bare-links   # the node services give the hosts their addresses
    fi
    node --conditions=development --import tsx tests/cluster/demo-guest.ts "$NAME" demo-vm1
    ;;
  migrate) node --conditions=development --import tsx tests/cluster/demo-guest.ts "$NAME" demo-vm1 ;;
  down)
    "${CTL[@]}" down --name "$NAME"
    # the demo registered itself as the default pvc connection; forget it with the cluster
    if [ -f apps/cli/dist/main.js ]; then node apps/cli/dist/main.js connection remove "$NAME" >/dev/null 2>&1 || true; fi
    ;;
  status) "${CTL[@]}" status --name "$NAME" ;;
  *) echo "usage: bash scripts/demo.sh up|migrate|down|status" >&2; exit 2 ;;
esac
