import { Argument, type Command } from 'commander';
import type { CliContext } from '../context.js';
import { complete, withNames } from '../completion/candidates.js';
import { dynamicNames } from '../completion/names.js';
import { completionScript, FILE_DIRECTIVE, SHELLS, type Shell } from '../completion/scripts.js';
import { commandTree } from '../completion/tree.js';

const INSTALL = `
Install (done by scripts/setup.sh on the machines it sets up):
  pvc completion bash > /usr/share/bash-completion/completions/pvc
  pvc completion zsh > /usr/share/zsh/vendor-completions/_pvc
or for the current shell only:
  source <(pvc completion bash)`;

/**
 * `pvc completion bash|zsh` prints a completion script; the hidden `pvc __complete -- <words...>`
 * that the scripts call prints the candidates for the last word, one per line (subcommands,
 * options, choices, and VM, node or connection names), or nothing. It never fails.
 */
export function registerCompletion(program: Command, ctx: CliContext): void {
  program
    .command('completion')
    .description('print the shell completion script for bash or zsh')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .addHelpText('after', INSTALL)
    .action((shell: Shell) => {
      ctx.io.stdout.write(completionScript(shell));
    });

  program
    .command('__complete', { hidden: true })
    .description('candidates for the last of <words> (used by the completion scripts)')
    .argument('[words...]', 'the words after "pvc", the last one being completed')
    .allowUnknownOption(true)
    .helpOption(false)
    .action(async (words: string[]) => {
      const c = complete(commandTree(program), words.length > 0 ? words : ['']);
      if (c.files) {
        ctx.io.stdout.write(`${FILE_DIRECTIVE}\n`);
        return;
      }
      const names = c.dynamic ? await dynamicNames(ctx, c.dynamic, c) : [];
      const out = withNames(c, names);
      if (out.length > 0) ctx.io.stdout.write(`${out.join('\n')}\n`);
    });
}
