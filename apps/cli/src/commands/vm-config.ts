import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `pvc vm define|modify|undefine|meta|tag|vcpu|memory` (being written). */
export function registerVmConfig(group: Command, ctx: CliContext): void {
  void group;
  void ctx;
}
