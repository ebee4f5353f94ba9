#!/usr/bin/env node
/**
 * Composition root of keepaliled: the common start-up (config, logger, local gRPC socket with
 * health and status), then keepalives, fencing, the primary election and health plugins until
 * SIGTERM/SIGINT.
 */
import { PVC_VERSION } from '@pvc/runtime';
import { serviceMain } from '@pvc/rpc';
import { registerKeepalived } from './rpc/handlers.js';
import { runKeepalived } from './run.js';
import type { Keepalived } from './service.js';

let service: Keepalived | undefined;
process.exit(
  await serviceMain({
    service: 'keepaliled',
    version: PVC_VERSION,
    argv: process.argv.slice(2),
    env: process.env,
    register: (server) => registerKeepalived(server, () => service?.state()),
    run: (ctx) => runKeepalived(ctx, (k) => (service = k)),
  }),
);
