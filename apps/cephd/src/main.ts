#!/usr/bin/env node
/**
 * Composition root of cephd: the common start-up (config, logger, local gRPC socket with health and
 * status), cephd's handlers (storage stats, RBD lock flush, primary role), then run until SIGTERM/SIGINT.
 */
import { PVC_VERSION } from '@pvc/runtime';
import { serviceMain } from '@pvc/rpc';
import type { Cephd } from './cephd.js';
import { runCephd } from './compose.js';
import { registerCephdRpc } from './rpc/handlers.js';

let cephd: Cephd | undefined;

process.exit(
  await serviceMain({
    service: 'cephd',
    version: PVC_VERSION,
    argv: process.argv.slice(2),
    env: process.env,
    register: (server) => registerCephdRpc(server, () => cephd),
    run: (ctx) => runCephd(ctx, (built) => (cephd = built)),
  }),
);
