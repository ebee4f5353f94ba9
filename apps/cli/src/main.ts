#!/usr/bin/env node
/** The `pvc` command (issue 5 fills in the command tree). */
import { PVC_VERSION } from '@pvc/runtime';

const args = process.argv.slice(2);
if (args.includes('--version')) {
  process.stdout.write(`pvc ${PVC_VERSION}\n`);
} else {
  process.stderr.write('pvc: the command tree is not built yet; only --version works\n');
  process.exitCode = 2;
}
