#!/usr/bin/env node
/**
 * Composition root of the supervisor: the common start-up (flags, config, logger, gRPC socket),
 * then bring-up, registration and — in standalone mode — the other services as children.
 * `--mode systemd|standalone`, `--external-services`, `--systemctl <program>`: see options.ts.
 */
import { serviceMain } from '@pvc/rpc';
import { describeError, PVC_VERSION } from '@pvc/runtime';
import { peekFlags } from './flags.js';
import { resolveRunOptions, SUPERVISOR_FLAGS, type RunOptions } from './options.js';
import { registerSupervisorService } from './rpc/supervisor-service.js';
import { SupervisorStatus } from './status.js';
import { runSupervisor } from './supervisor.js';
import { realDeps } from './wiring.js';

const argv = process.argv.slice(2);
let options: RunOptions;
try {
  options = resolveRunOptions(peekFlags(argv, SUPERVISOR_FLAGS), process.env);
} catch (err) {
  process.stderr.write(`supervisor: ${describeError(err)}\n`);
  process.exit(2);
}
const status = new SupervisorStatus();
process.exit(
  await serviceMain({
    service: 'supervisor',
    version: PVC_VERSION,
    argv,
    env: process.env,
    flags: SUPERVISOR_FLAGS,
    register: (server) => registerSupervisorService(server, status),
    run: (ctx) => runSupervisor(realDeps(ctx, options, status, process.env)),
  }),
);
