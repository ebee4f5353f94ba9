import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { complete, sourceOf, withNames, type CompletionCommand, type CompletionOption } from './candidates.js';

const opt = (flags: string[], value: CompletionOption['value'] = 'none', extra: Partial<CompletionOption> = {}): CompletionOption => ({ flags, value, ...extra });
const cmd = (name: string, extra: Partial<CompletionCommand> = {}): CompletionCommand => ({ name, aliases: [], options: [], args: [], commands: [], ...extra });

const help = opt(['-h', '--help']);
const tree: CompletionCommand = cmd('pvc', {
  options: [opt(['--version']), help, opt(['-c', '--connection'], 'required', { valueName: 'name' }), opt(['--zk'], 'required', { valueName: 'hosts' }), opt(['--no-color'])],
  commands: [
    cmd('connection', { options: [help], commands: [cmd('add', { args: [{ name: 'name', variadic: false }], options: [help, opt(['--hosts'], 'required', { valueName: 'hosts' })] }), cmd('remove', { args: [{ name: 'name', variadic: false }] })] }),
    cmd('vm', {
      options: [help],
      commands: [
        cmd('start', { args: [{ name: 'vm', variadic: false }], options: [help, opt(['-w', '--wait']), opt(['--wait-timeout'], 'required', { valueName: 'seconds' })] }),
        cmd('stop', { args: [{ name: 'vm', variadic: false }] }),
        cmd('migrate', { args: [{ name: 'vm', variadic: false }], options: [opt(['-t', '--target'], 'required', { valueName: 'node' })] }),
        cmd('list', { aliases: ['ls'], options: [opt(['-f', '--format'], 'required', { valueName: 'format', choices: ['human', 'json'] })] }),
        cmd('define', { args: [{ name: 'file', variadic: false }] }),
        cmd('tag', { args: [{ name: 'vm', variadic: false }, { name: 'tags', variadic: true }] }),
      ],
    }),
    cmd('completion', { args: [{ name: 'shell', variadic: false, choices: ['bash', 'zsh'] }] }),
  ],
});

describe('complete', () => {
  it('offers subcommands and aliases by prefix, nothing else before a subcommand', () => {
    assert.deepEqual(complete(tree, ['']).values, ['connection', 'vm', 'completion']);
    assert.deepEqual(complete(tree, ['c']).values, ['connection', 'completion']);
    assert.deepEqual(complete(tree, ['vm', 'st']).values, ['start', 'stop']);
    assert.deepEqual(complete(tree, ['vm', 'l']).values, ['list', 'ls']);
    assert.deepEqual(complete(tree, ['vm', 'x']).values, []);
  });

  it('offers the options of the command and its parents for a word starting with -', () => {
    assert.deepEqual(complete(tree, ['vm', 'start', '--w']).values, ['--wait', '--wait-timeout']);
    assert.deepEqual(complete(tree, ['vm', 'start', '-']).values, ['-h', '--help', '-w', '--wait', '--wait-timeout', '--version', '-c', '--connection', '--zk', '--no-color']);
    assert.deepEqual(complete(tree, ['--n']).values, ['--no-color']);
  });

  it('asks for VM names for <vm>, node names for <node> values, connection names for connection <name> and -c', () => {
    assert.equal(complete(tree, ['vm', 'start', '']).dynamic, 'vm');
    assert.equal(complete(tree, ['vm', 'start', 'we']).prefix, 'we');
    assert.equal(complete(tree, ['vm', 'migrate', 'web', '--target', '']).dynamic, 'node');
    assert.equal(complete(tree, ['vm', 'migrate', 'web', '-t', 'h']).dynamic, 'node');
    assert.equal(complete(tree, ['connection', 'remove', '']).dynamic, 'connection');
    assert.equal(complete(tree, ['-c', '']).dynamic, 'connection');
    assert.equal(complete(tree, ['connection', 'add', 'x', '--hosts', '']).dynamic, undefined);
  });

  it('offers nothing once the arguments are used up, but a variadic one goes on', () => {
    const full = complete(tree, ['vm', 'start', 'web', '']);
    assert.deepEqual([full.values, full.dynamic, full.files], [[], undefined, false]);
    assert.equal(complete(tree, ['vm', 'tag', 'web', 'a', 'b', '']).dynamic, undefined);
    assert.equal(complete(tree, ['vm', 'tag', '']).dynamic, 'vm');
  });

  it('offers choices of options and arguments, also as --opt=value', () => {
    assert.deepEqual(complete(tree, ['vm', 'list', '--format', '']).values, ['human', 'json']);
    assert.deepEqual(complete(tree, ['vm', 'list', '-f', 'j']).values, ['json']);
    assert.deepEqual(complete(tree, ['vm', 'list', '--format=h']).values, ['--format=human']);
    assert.deepEqual(complete(tree, ['completion', '']).values, ['bash', 'zsh']);
    assert.deepEqual(complete(tree, ['vm', 'list', '--format=json', '']).values, []);
  });

  it('skips option values when walking: an option value is not an argument', () => {
    assert.equal(complete(tree, ['vm', 'start', '--wait-timeout', '30', '']).dynamic, 'vm');
    assert.equal(complete(tree, ['vm', 'start', '-w', '']).dynamic, 'vm');
    assert.deepEqual(complete(tree, ['--zk', 'a:2181', 'vm', 'st']).values, ['start', 'stop']);
  });

  it('reports -c and --zk given earlier on the line, in every spelling', () => {
    assert.equal(complete(tree, ['-c', 'lab', 'vm', 'start', '']).connection, 'lab');
    assert.equal(complete(tree, ['-clab', 'vm', 'start', '']).connection, 'lab');
    assert.equal(complete(tree, ['--connection=lab', 'vm', 'start', '']).connection, 'lab');
    assert.equal(complete(tree, ['vm', 'start', '--zk', 'h1:2181,h2', '']).zk, 'h1:2181,h2');
    assert.equal(complete(tree, ['vm', 'start', '']).connection, undefined);
  });

  it('asks the shell for file names for a <file> argument', () => {
    assert.equal(complete(tree, ['vm', 'define', '']).files, true);
  });

  it('treats everything after -- as arguments', () => {
    assert.deepEqual(complete(tree, ['vm', 'start', '--', '-']).values, []);
    assert.equal(complete(tree, ['vm', 'start', '--', '']).dynamic, 'vm');
  });

  it('copes with no words and with unknown options', () => {
    assert.deepEqual(complete(tree, []).values, ['connection', 'vm', 'completion']);
    assert.deepEqual(complete(tree, ['--bogus', 'vm', 'st']).values, ['start', 'stop']);
  });
});

describe('withNames and sourceOf', () => {
  it('narrows fetched names to the prefix and adds the --opt= prefix', () => {
    assert.deepEqual(withNames(complete(tree, ['vm', 'start', 'w']), ['web1', 'db1', 'web2']), ['web1', 'web2']);
    assert.deepEqual(withNames(complete(tree, ['vm', 'migrate', 'x', '--target=h']), ['hv1', 'hv2', 'c1']), ['--target=hv1', '--target=hv2']);
  });

  it('maps argument names to sources', () => {
    assert.equal(sourceOf('vm', ['vm', 'start']), 'vm');
    assert.equal(sourceOf('node', ['node', 'info']), 'node');
    assert.equal(sourceOf('name', ['connection', 'remove']), 'connection');
    assert.equal(sourceOf('name', ['cluster', 'init']), undefined);
    assert.equal(sourceOf('file', ['vm', 'define']), 'file');
    assert.equal(sourceOf('fault-id', ['cluster', 'fault', 'ack']), 'fault');
    assert.equal(sourceOf('net', ['network', 'info']), 'network');
  });
});
