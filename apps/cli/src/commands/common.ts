import { Option, type Command } from 'commander';
import { describeError } from '@pvc/runtime';
import type { CliContext } from '../context.js';
import { refused, usage } from '../errors.js';
import { parseFormat, type Format } from '../output.js';
import { DEFAULT_WAIT_TIMEOUT_S, parseWaitTimeout } from '../wait.js';

/** `-f, --format human|json` of every read command. */
export function formatOption(): Option {
  return new Option('-f, --format <format>', 'output format').choices(['human', 'json']).default('human');
}

/** Reads the parsed `--format`. */
export function formatOf(opts: { format?: string }): Format {
  return parseFormat(opts.format);
}

/** `-w, --wait` and `--wait-timeout <s>` of every state-changing command. */
export function addWaitOptions(cmd: Command, what = 'the change'): Command {
  return cmd
    .option('-w, --wait', `wait until ${what} is done or has failed, showing progress`)
    .option('--wait-timeout <seconds>', 'give up waiting after this long (exit 4)', String(DEFAULT_WAIT_TIMEOUT_S));
}

/** The wait settings of a command's options: undefined when `--wait` was not given. */
export function waitOf(opts: { wait?: boolean; waitTimeout?: string }): number | undefined {
  return opts.wait ? parseWaitTimeout(opts.waitTimeout) : undefined;
}

/** A command body: gets the context and the parsed arguments (commander's action arguments). */
export type Action = (...args: never[]) => Promise<void>;

/**
 * Registers a group that exists in the original but whose capability is not here yet: every
 * subcommand exits 1 with one line saying so (and which service will bring it); `-h` still works.
 */
export function notYetGroup(parent: Command, name: string, summary: string, why: string, subcommands: readonly string[]): Command {
  const group = parent.command(name).description(`${summary} (not available yet)`);
  for (const sub of subcommands) {
    group
      .command(sub)
      .description(`not available yet: ${why}`)
      .allowUnknownOption(true)
      .allowExcessArguments(true)
      .action(() => {
        throw refused(`${name} ${sub}: ${why}`);
      });
  }
  return group;
}

/** Reads an input file through the CLI's I/O; an unreadable file is a usage error naming it. */
export async function readInputFile(ctx: CliContext, file: string): Promise<string> {
  try {
    return await ctx.io.readFile(file);
  } catch (err) {
    throw usage(`cannot read ${file}: ${describeError(err)}`);
  }
}
