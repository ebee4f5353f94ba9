#!/usr/bin/env node
/**
 * Entry of the lease hook dnsmasq runs (through the wrapper `hook-script.ts` writes). Logic in
 * `lease-hook-run.ts`. Exits within {@link HOOK_DEADLINE_MS} whatever Zookeeper does.
 */
import { realClock } from '@pvc/runtime';
import { connectZk } from '@pvc/zk';
import { HOOK_DEADLINE_MS, runLeaseHook } from './lease-hook-run.js';

const deadline = setTimeout(() => {
  process.stderr.write(`pvc lease hook: ${process.argv.slice(2).join(' ')}: gave up after ${HOOK_DEADLINE_MS} ms\n`);
  process.exit(1);
}, HOOK_DEADLINE_MS);

const code = await runLeaseHook(
  {
    argv: process.argv.slice(2),
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (line) => process.stderr.write(`${line}\n`),
  },
  (hosts, port) => connectZk({ hosts, port, clock: realClock, sessionTimeoutMs: 10_000, opTimeoutMs: 5_000 }, { timeoutMs: 5_000 }),
);
clearTimeout(deadline);
// Output to pipes is synchronous on Linux; exit at once instead of waiting for sockets to linger.
process.exit(code);
