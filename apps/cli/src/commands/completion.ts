import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `pvc completion bash|zsh` (filled in by the completion work). */
export function registerCompletion(program: Command, ctx: CliContext): void {
  void ctx;
  void program;
}
