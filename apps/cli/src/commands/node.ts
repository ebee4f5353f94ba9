import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `pvc node ...` (filled in by the node commands). */
export function registerNode(program: Command, ctx: CliContext): void {
  void ctx;
  program.command('node').description('cluster nodes: list, info, log, flush, ready, primary, secondary');
}
