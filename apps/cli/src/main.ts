#!/usr/bin/env node
/** The `pvc` command: composition root. */
import { processIo } from './io.js';
import { runCli } from './cli.js';

const abort = new AbortController();
process.once('SIGINT', () => abort.abort());
// A reader that stops early (`pvc vm list | head`) closes our stdout: stop quietly, as other Unix
// tools do, instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    abort.abort();
    process.exit(process.exitCode ?? 0);
  });
}
process.exitCode = await runCli(process.argv.slice(2), processIo(abort.signal));
