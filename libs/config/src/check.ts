/**
 * `--check-config`, shared by every service's `main.ts`.
 *
 * @module
 */
import { ConfigError } from './errors.js';
import { loadConfig } from './load.js';

/** Somewhere to write lines; `process.stdout` and `process.stderr` fit. */
export interface LineSink {
  write(text: string): unknown;
}

/** Where {@link checkConfigMain} reports: `out` for success, `err` for problems. */
export interface CheckConfigOutput {
  readonly out: LineSink;
  readonly err: LineSink;
}

/** The flag services recognise to run {@link checkConfigMain} instead of starting. */
export const CHECK_CONFIG_FLAG = '--check-config';

/** Whether argv asks for a configuration check. */
export function wantsCheckConfig(argv: readonly string[]): boolean {
  return argv.includes(CHECK_CONFIG_FLAG);
}

/**
 * Validates the configuration the service would load (same `--config` / `PVCD_CONFIG_FILE` /
 * default precedence) and reports it.
 *
 * On success writes `config OK: <path> (node <name>, coordinator|hypervisor)` to `out.out` and
 * returns 0. On failure writes a `config INVALID: <path>` header and then every problem line
 * (`<key path>: expected ..., got ...`) to `out.err` and returns 2 — no stack trace, and never a
 * password. Errors other than {@link ConfigError} are bugs and are rethrown.
 */
export async function checkConfigMain(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  out: CheckConfigOutput,
): Promise<0 | 2> {
  try {
    const config = await loadConfig({ argv, env });
    out.out.write(`config OK: ${config.source} (node ${config.node}, ${config.mode})\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const count = err.problems.length === 1 ? '1 problem' : `${err.problems.length} problems`;
    out.err.write(`config INVALID: ${err.source} (${count})\n${err.message}\n`);
    return 2;
  }
}
