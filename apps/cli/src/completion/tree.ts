import type { Command } from 'commander';
import type { CompletionArg, CompletionCommand, CompletionOption } from './candidates.js';

/**
 * The commander tree as completion data: visible subcommands (hidden ones such as `__complete`
 * are left out; the implicit `help` command is in), visible options with their choices and value
 * names, and positional arguments.
 */
export function commandTree(cmd: Command): CompletionCommand {
  const help = cmd.createHelp();
  return {
    name: cmd.name(),
    aliases: cmd.aliases(),
    options: help.visibleOptions(cmd).map((o): CompletionOption => {
      const valueName = /[<[]([^>\]]+?)(?:\.\.\.)?[>\]]/.exec(o.flags)?.[1];
      return {
        flags: [o.short, o.long].filter((f): f is string => typeof f === 'string'),
        value: o.required ? 'required' : o.optional ? 'optional' : 'none',
        ...(valueName ? { valueName } : {}),
        ...(o.argChoices ? { choices: [...o.argChoices] } : {}),
      };
    }),
    args: cmd.registeredArguments.map((a): CompletionArg => ({
      name: a.name(),
      variadic: a.variadic,
      ...(a.argChoices ? { choices: [...a.argChoices] } : {}),
    })),
    commands: help.visibleCommands(cmd).map(commandTree),
  };
}
