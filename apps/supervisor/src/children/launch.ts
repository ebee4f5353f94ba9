import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ProcessSpec } from '../host/process-port.js';
import { CHILD_SERVICES } from './group.js';

/** What a launch spec is built from: the supervisor's own runtime and config file. */
export interface LaunchContext {
  /** `process.execPath`. */
  readonly execPath: string;
  /** `process.execArgv`: under `--conditions=development --import tsx` children run from source too. */
  readonly execArgv: readonly string[];
  readonly configPath: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Resolves a package specifier to a file URL (`import.meta.resolve`). */
  readonly resolve: (specifier: string) => string;
}

/** `path` with links resolved; as given when it cannot be (tests pass made-up paths). */
function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** How to start each child service: the same node, the same flags, the package's main, `--config`. */
export function childSpecs(ctx: LaunchContext): ProcessSpec[] {
  return CHILD_SERVICES.map((name) => ({
    name,
    command: ctx.execPath,
    // The real path (the workspace's node_modules/@pvc/<name> is a link): one name per service in
    // ps and /proc, whichever way the package was resolved.
    args: [...ctx.execArgv, canonical(fileURLToPath(ctx.resolve(`@pvc/${name}`))), '--config', ctx.configPath],
    env: ctx.env,
  }));
}
