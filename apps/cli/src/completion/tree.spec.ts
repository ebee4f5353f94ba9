import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Argument, Command, Option } from 'commander';
import { complete } from './candidates.js';
import { commandTree } from './tree.js';

function program(): Command {
  const p = new Command('pvc').version('pvc 0.1.0', '--version').option('-c, --connection <name>', 'a connection');
  const vm = p.command('vm');
  vm.command('start <vm>').alias('go').option('-w, --wait', 'wait').addOption(new Option('--mode [mode]').choices(['a', 'b']));
  vm.command('list').addOption(new Option('-f, --format <format>').choices(['human', 'json']));
  p.command('completion').addArgument(new Argument('<shell>').choices(['bash', 'zsh']));
  p.command('__complete', { hidden: true }).argument('[words...]');
  return p;
}

describe('commandTree', () => {
  it('takes names, aliases, options with values and choices, and arguments from commander', () => {
    const t = commandTree(program());
    assert.deepEqual(t.commands.map((c) => c.name), ['vm', 'completion', 'help']);
    const start = t.commands[0]?.commands[0];
    assert.equal(start?.name, 'start');
    assert.deepEqual(start?.aliases, ['go']);
    assert.deepEqual(start?.args, [{ name: 'vm', variadic: false }]);
    assert.deepEqual(start?.options, [
      { flags: ['-w', '--wait'], value: 'none' },
      { flags: ['--mode'], value: 'optional', valueName: 'mode', choices: ['a', 'b'] },
      { flags: ['-h', '--help'], value: 'none' },
    ]);
    assert.deepEqual(t.options.find((o) => o.flags.includes('-c')), { flags: ['-c', '--connection'], value: 'required', valueName: 'name' });
    assert.deepEqual(t.commands[1]?.args, [{ name: 'shell', variadic: false, choices: ['bash', 'zsh'] }]);
  });

  it('leaves hidden commands out, so they are never offered', () => {
    assert.deepEqual(complete(commandTree(program()), ['__']).values, []);
    assert.deepEqual(complete(commandTree(program()), ['vm', 'list', '--format', '']).values, ['human', 'json']);
  });
});
