import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `pvc vm ...` (filled in by the VM commands). */
export function registerVm(program: Command, ctx: CliContext): void {
  void ctx;
  program.command('vm').description('virtual machines');
}
