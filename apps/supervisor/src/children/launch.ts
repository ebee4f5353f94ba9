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

/** How to start each child service: the same node, the same flags, the package's main, `--config`. */
export function childSpecs(ctx: LaunchContext): ProcessSpec[] {
  return CHILD_SERVICES.map((name) => ({
    name,
    command: ctx.execPath,
    args: [...ctx.execArgv, fileURLToPath(ctx.resolve(`@pvc/${name}`)), '--config', ctx.configPath],
    env: ctx.env,
  }));
}
