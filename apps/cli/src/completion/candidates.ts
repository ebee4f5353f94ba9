/**
 * Shell completion, the pure part: given the command tree as data and the words typed so far,
 * what may come next. The shell scripts (scripts.ts) are thin: they hand the words to the hidden
 * `pvc __complete` command, which calls {@link complete} and fetches VM, node or connection names
 * when the answer asks for them.
 */

/** Where names that are not in the tree come from. */
export type DynamicSource = 'vm' | 'node' | 'connection' | 'fault' | 'network';

/** One option of a command, as completion sees it. */
export interface CompletionOption {
  /** Its spellings: `-c`, `--connection`. */
  flags: readonly string[];
  /** Whether it takes a value. */
  value: 'none' | 'required' | 'optional';
  /** The value's name in the help (`<name>` → `name`). */
  valueName?: string;
  /** Allowed values (`.choices()`). */
  choices?: readonly string[];
}

/** One positional argument of a command. */
export interface CompletionArg {
  name: string;
  variadic: boolean;
  choices?: readonly string[];
}

/** A command (the program itself at the root) with what it accepts. Hidden commands are left out. */
export interface CompletionCommand {
  name: string;
  aliases: readonly string[];
  options: readonly CompletionOption[];
  args: readonly CompletionArg[];
  commands: readonly CompletionCommand[];
}

/** What to offer for the word being completed. */
export interface Completion {
  /** Candidates from the tree, already narrowed to `prefix`. */
  values: string[];
  /** Names to fetch from the cluster or the connection store, then narrow to `prefix`. */
  dynamic?: DynamicSource;
  /** The word is a file name: let the shell complete files. */
  files: boolean;
  /** The part of the current word candidates must start with (`--format=j` → `j`, with `valuePrefix` `--format=`). */
  prefix: string;
  /** Put before each fetched name (the `--opt=` of `--opt=value`). */
  valuePrefix: string;
  /** `-c/--connection` given earlier on the line. */
  connection?: string;
  /** `--zk` given earlier on the line. */
  zk?: string;
}

/** Which names an argument or option value called `name` takes (`<vm>`, `<node>`, `<net>`, connection `<name>`). */
export function sourceOf(name: string, path: readonly string[]): DynamicSource | 'file' | undefined {
  const n = name.toLowerCase();
  if (n === 'vm' || n === 'vms' || n === 'domain') return 'vm';
  if (n === 'node' || n === 'nodes' || n === 'target') return 'node';
  if (n === 'connection' || (n === 'name' && path[0] === 'connection')) return 'connection';
  if (n === 'fault-id' || n === 'fault') return 'fault';
  if (n === 'net' || n === 'network') return 'network';
  if (n === 'file' || n === 'path' || n.endsWith('file') || n.endsWith('-path')) return 'file';
  return undefined;
}

interface Position {
  chain: CompletionCommand[];
  path: string[];
  argIndex: number;
  dashdash: boolean;
  pending?: CompletionOption | undefined;
  connection?: string;
  zk?: string;
}

/**
 * Completes the last of `words` (the words after `pvc`; the last may be empty when the cursor
 * follows a space). Walks the earlier words like the parser would: subcommands, options and their
 * values (including `--opt=value` and `-cNAME`), `--` and positional arguments.
 */
export function complete(tree: CompletionCommand, words: readonly string[]): Completion {
  const current = words.length > 0 ? (words[words.length - 1] ?? '') : '';
  const pos = locate(tree, words.slice(0, -1));
  const base = { ...(pos.connection !== undefined ? { connection: pos.connection } : {}), ...(pos.zk !== undefined ? { zk: pos.zk } : {}) };
  if (pos.pending) return { ...valueOf(pos.pending, pos.path, current, ''), ...base };
  const eq = current.indexOf('=');
  if (current.startsWith('--') && eq > 0) {
    const option = findOption(pos.chain, current.slice(0, eq));
    if (!option || option.value === 'none') return { ...none(current), ...base };
    return { ...valueOf(option, pos.path, current.slice(eq + 1), current.slice(0, eq + 1)), ...base };
  }
  if (current.startsWith('-') && !pos.dashdash) {
    const flags = pos.chain.flatMap((c) => c.options.flatMap((o) => o.flags));
    return { ...none(current), values: unique(flags.filter((f) => f.startsWith(current))), ...base };
  }
  return { ...argumentsOf(pos, current), ...base };
}

function none(prefix: string): Completion {
  return { values: [], files: false, prefix, valuePrefix: '' };
}

function valueOf(option: CompletionOption, path: readonly string[], prefix: string, valuePrefix: string): Completion {
  if (option.choices) return { ...none(prefix), valuePrefix, values: option.choices.filter((c) => c.startsWith(prefix)).map((c) => valuePrefix + c) };
  const long = option.flags.find((f) => f.startsWith('--'))?.slice(2) ?? '';
  const source = sourceOf(option.valueName ?? '', path) ?? sourceOf(long, path);
  if (source === 'file') return { ...none(prefix), valuePrefix, files: true };
  return { ...none(prefix), valuePrefix, ...(source ? { dynamic: source } : {}) };
}

function argumentsOf(pos: Position, prefix: string): Completion {
  const node = pos.chain[0];
  if (!node) return none(prefix);
  const out = none(prefix);
  if (pos.argIndex === 0) {
    for (const c of node.commands) out.values.push(...[c.name, ...c.aliases].filter((n) => n.startsWith(prefix)));
  }
  const last = node.args[node.args.length - 1];
  const arg = node.args[pos.argIndex] ?? (last?.variadic ? last : undefined);
  if (!arg) return { ...out, values: unique(out.values) };
  if (arg.choices) out.values.push(...arg.choices.filter((c) => c.startsWith(prefix)));
  const source = arg.choices ? undefined : sourceOf(arg.name, pos.path);
  if (source === 'file') out.files = true;
  else if (source) out.dynamic = source;
  return { ...out, values: unique(out.values) };
}

/** Walks the words before the current one, like the parser would. */
function locate(tree: CompletionCommand, words: readonly string[]): Position {
  const pos: Position = { chain: [tree], path: [], argIndex: 0, dashdash: false };
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    pos.pending = undefined;
    if (!pos.dashdash && word === '--') {
      pos.dashdash = true;
    } else if (!pos.dashdash && word.startsWith('-') && word.length > 1) {
      const consumed = optionWord(pos, word, words[i + 1]);
      if (consumed === 'next') i++;
      else if (consumed === 'pending') break;
    } else {
      const sub = pos.argIndex === 0 && !pos.dashdash ? pos.chain[0]?.commands.find((c) => c.name === word || c.aliases.includes(word)) : undefined;
      if (sub) {
        pos.chain.unshift(sub);
        pos.path.push(sub.name);
      } else {
        pos.argIndex++;
      }
    }
  }
  return pos;
}

/** Handles an option word: records -c/--zk values; 'next' when the value is the next word. */
function optionWord(pos: Position, word: string, next: string | undefined): 'done' | 'next' | 'pending' {
  let flag = word;
  let value: string | undefined;
  const eq = word.indexOf('=');
  if (word.startsWith('--') && eq > 0) {
    flag = word.slice(0, eq);
    value = word.slice(eq + 1);
  } else if (!word.startsWith('--') && word.length > 2) {
    flag = word.slice(0, 2);
    const short = findOption(pos.chain, flag);
    if (short && short.value !== 'none') value = word.slice(2);
    else return 'done'; // combined boolean flags (-wy): nothing to record
  }
  const option = findOption(pos.chain, flag);
  if (!option || option.value === 'none') return 'done';
  if (value === undefined && option.value === 'optional' && (next === undefined || next.startsWith('-'))) return 'done';
  if (value === undefined && next === undefined) {
    pos.pending = option;
    return 'pending';
  }
  record(pos, option, value ?? next ?? '');
  return value === undefined ? 'next' : 'done';
}

function record(pos: Position, option: CompletionOption, value: string): void {
  if (option.flags.includes('--connection')) pos.connection = value;
  if (option.flags.includes('--zk')) pos.zk = value;
}

function findOption(chain: readonly CompletionCommand[], flag: string): CompletionOption | undefined {
  for (const c of chain) {
    const o = c.options.find((opt) => opt.flags.includes(flag));
    if (o) return o;
  }
  return undefined;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** Narrows fetched names to the completion's prefix and adds its value prefix. */
export function withNames(c: Completion, names: readonly string[]): string[] {
  return unique([...c.values, ...names.filter((n) => n.startsWith(c.prefix)).map((n) => c.valuePrefix + n)]);
}
