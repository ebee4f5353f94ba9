import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerVmConfig } from './vm-config.js';
import { registerVmState } from './vm-state.js';

/** `pvc vm ...`: state changes and views (vm-state.ts), definition and settings (vm-config.ts). */
export function registerVm(program: Command, ctx: CliContext): void {
  const group = program.command('vm').description('virtual machines: define, start, stop, migrate, list, info, ...');
  registerVmConfig(group, ctx);
  registerVmState(group, ctx);
}
