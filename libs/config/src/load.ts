/**
 * Finding and reading `pvcnoded.yaml`.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { ConfigError, ConfigErrorCode } from './errors.js';
import type { Config } from './types.js';
import { parseConfig } from './validate.js';

/** Where the file lives when neither `--config` nor `PVCD_CONFIG_FILE` says otherwise. */
export const DEFAULT_CONFIG_PATH = '/etc/pvc/pvcnoded.yaml';

/** The environment variable naming the file, as in the original daemon. */
export const CONFIG_ENV_VAR = 'PVCD_CONFIG_FILE';

/** Where to find the configuration. All fields are optional; see {@link resolveConfigPath}. */
export interface LoadConfigOptions {
  /** An explicit path; wins over everything else. */
  readonly path?: string | undefined;
  /** Command-line arguments; `--config <path>` or `--config=<path>` is honoured anywhere in them. */
  readonly argv?: readonly string[] | undefined;
  /** Environment; `PVCD_CONFIG_FILE` is honoured when non-empty. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

function usageError(message: string): ConfigError {
  return new ConfigError(ConfigErrorCode.Unreadable, '--config', [{ path: '--config', message }]);
}

/** The value of `--config` in argv, or undefined when the flag is absent. */
function configFlag(argv: readonly string[]): string | undefined {
  let found: string | undefined;
  argv.forEach((arg, i) => {
    if (arg.startsWith('--config=')) found = arg.slice('--config='.length);
    else if (arg === '--config') found = argv[i + 1] ?? '';
  });
  if (found !== undefined && (found === '' || found.startsWith('--'))) {
    throw usageError('expected a file path, got nothing');
  }
  return found;
}

/**
 * The configuration file path: `path`, else `--config` in argv (the last one wins), else
 * `PVCD_CONFIG_FILE`, else {@link DEFAULT_CONFIG_PATH}.
 *
 * @throws ConfigError `CONFIG_UNREADABLE` when `--config` has no value.
 */
export function resolveConfigPath(options: LoadConfigOptions = {}): string {
  if (options.path !== undefined && options.path !== '') return options.path;
  const fromArgv = configFlag(options.argv ?? []);
  if (fromArgv !== undefined) return fromArgv;
  const fromEnv = options.env?.[CONFIG_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return DEFAULT_CONFIG_PATH;
}

function readProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'cannot read file: it does not exist';
  if (code === 'EACCES') return 'cannot read file: permission denied';
  if (code === 'EISDIR') return 'cannot read file: it is a directory';
  const why = err instanceof Error ? err.message : String(err);
  return `cannot read file: ${why.split('\n')[0] ?? why}`;
}

/**
 * Finds, reads, parses and validates the configuration (see {@link resolveConfigPath}).
 *
 * @returns the deeply frozen {@link Config}; `config.source` is the path read.
 * @throws ConfigError `CONFIG_UNREADABLE` (missing or unreadable file, YAML syntax error) or
 *   `CONFIG_INVALID` (every schema problem at once).
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<Config> {
  const path = resolveConfigPath(options);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(ConfigErrorCode.Unreadable, path, [{ path, message: readProblem(err) }], { cause: err });
  }
  return parseConfig(text, path);
}
