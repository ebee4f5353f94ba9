#!/bin/bash
# The local multi-host test cluster (root only), for the demo and by hand. See tests/cluster/README.md.
#   scripts/cluster-ctl.sh up [--name pvct] [--hosts 3] [--coordinators 3]
#   scripts/cluster-ctl.sh status|down [--name pvct]
#   scripts/cluster-ctl.sh xml <vm> [--name pvct]
#   scripts/cluster-ctl.sh sweep [name…]     remove leftovers of crashed runs (default: all registered + pvct)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cmd="${1:-}"
[ -n "$cmd" ] || { sed -n '2,7p' "${BASH_SOURCE[0]}"; exit 2; }
shift
if [ "$cmd" = sweep ]; then
  exec node --conditions=development --import tsx tests/cluster/harness/sweep.ts "$@"
fi
exec node --conditions=development --import tsx tests/cluster/harness/cli.ts "$cmd" "$@"
