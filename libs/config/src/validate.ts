/**
 * Validation entry points that do no I/O: a raw object, or YAML text.
 *
 * @module
 */
import { CORE_SCHEMA, YAMLException, load } from 'js-yaml';
import { buildConfig } from './build.js';
import { ConfigError, ConfigErrorCode } from './errors.js';
import { problemsFromIssues } from './problems.js';
import { crossKeyProblems } from './rules.js';
import { documentSchema } from './schema.js';
import type { Config } from './types.js';

/**
 * Validates an already-parsed document (the object YAML gives for `pvcnoded.yaml`, with its
 * top-level `pvc` key) and returns the frozen {@link Config}.
 *
 * Unknown keys are problems, not warnings: a misspelt key that was silently ignored would leave
 * its setting at a default the operator never chose, a classic trap with fencing and networking.
 *
 * @param raw - the parsed document; it is not modified.
 * @param source - a name for messages and {@link Config.source}, e.g. the file path.
 * @throws ConfigError with code `CONFIG_INVALID`, listing every problem found.
 */
export function validateConfig(raw: unknown, source = '(object)'): Config {
  const parsed = documentSchema.safeParse(raw);
  const problems = [
    ...(parsed.success ? [] : problemsFromIssues(documentSchema, raw, parsed.error.issues)),
    ...crossKeyProblems(raw),
  ];
  if (!parsed.success || problems.length > 0) {
    throw new ConfigError(ConfigErrorCode.Invalid, source, problems);
  }
  return buildConfig(parsed.data, source);
}

/**
 * Parses YAML text (with the YAML 1.2 core schema, so dates and the like stay strings, and a
 * duplicated key is an error) and validates it.
 *
 * @param text - the file content.
 * @param sourceName - the file path or another name used in messages.
 * @throws ConfigError with code `CONFIG_UNREADABLE` for a YAML syntax error (one line naming
 *   file, line and column), or `CONFIG_INVALID` for schema problems.
 */
export function parseConfig(text: string, sourceName: string): Config {
  let raw: unknown;
  try {
    raw = load(text, { schema: CORE_SCHEMA, filename: sourceName });
  } catch (err) {
    if (!(err instanceof YAMLException)) throw err;
    const where = `line ${err.mark.line + 1}, column ${err.mark.column + 1}`;
    const problem = { path: sourceName, message: `YAML syntax error at ${where}: ${err.reason}` };
    throw new ConfigError(ConfigErrorCode.Unreadable, sourceName, [problem], { cause: err });
  }
  return validateConfig(raw, sourceName);
}
