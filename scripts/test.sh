#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up (idempotent), typecheck, lint, then every test tier
# (unit, sim, integration against real servers, cluster in network namespaces). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

bash scripts/setup.sh

echo "=== typecheck (tests, bench) ==="
npx --no-install tsc -p tests/tsconfig.json

echo "=== lint (module boundaries, floating promises) ==="
npx --no-install nx show projects >/dev/null   # the module-boundaries rule reads the cached project graph
npx --no-install eslint .

node tools/run-tests.mjs "${PVC_TEST_TIERS:-all}"
