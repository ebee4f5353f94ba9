import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `pvc cluster ...`. */
export function registerCluster(program: Command, ctx: CliContext): void {
  void ctx;
  program.command('cluster').description('the cluster as a whole');
}
