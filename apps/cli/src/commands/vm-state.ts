import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `pvc vm start|stop|shutdown|restart|disable|migrate|unmigrate|move|list|info|dump|log` (being written). */
export function registerVmState(group: Command, ctx: CliContext): void {
  void group;
  void ctx;
}
