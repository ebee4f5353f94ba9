#!/usr/bin/env node
/**
 * Composition root of netd: the common start-up (config, logger, local gRPC socket with health and
 * status), netd's handlers (network stats, primary role), then netd's work until SIGTERM/SIGINT.
 */
import { PVC_VERSION } from '@pvc/runtime';
import { serviceMain } from '@pvc/rpc';
import { runNetd } from './compose.js';
import type { Netd } from './netd.js';
import { registerNetdRpc } from './rpc/handlers.js';

let netd: Netd | undefined;

process.exit(
  await serviceMain({
    service: 'netd',
    version: PVC_VERSION,
    argv: process.argv.slice(2),
    env: process.env,
    register: (server) => registerNetdRpc(server, () => netd),
    run: (ctx) => runNetd(ctx, (built) => (netd = built)),
  }),
);
