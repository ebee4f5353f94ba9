#!/usr/bin/env node
/** The `pvc` command: composition root. */
import { processIo } from './io.js';
import { runCli } from './cli.js';

const abort = new AbortController();
process.once('SIGINT', () => abort.abort());
process.exitCode = await runCli(process.argv.slice(2), processIo(abort.signal));
