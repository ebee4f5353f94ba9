/**
 * A plugin context over fakes, for unit tests of plugins: FakeExec, an in-memory file table, a
 * scripted TCP answer and BMC. Not used by production code.
 *
 * @module
 */
import { parseConfig } from '@pvc/config';
import type { Config } from '@pvc/config';
import { sampleText } from '@pvc/config/testing';
import { FakeExec, VirtualClock, silentLogger } from '@pvc/runtime';
import { contextBase, pluginContext } from './context.js';
import type { PluginBmc, PluginContext, PluginServiceState } from './types.js';

/** Knobs of {@link fakePluginContext}. */
export interface FakeContextOptions {
  exec?: FakeExec;
  /** path → content; a missing path rejects with ENOENT. */
  files?: Record<string, string>;
  tcp?: (host: string, port: number, request: string) => Promise<string>;
  bmc?: PluginBmc;
  config?: Config;
  node?: string;
  isCoordinator?: boolean;
  clock?: VirtualClock;
  signal?: AbortSignal;
  services?: () => readonly PluginServiceState[];
}

/** The sample configuration (`deploy/config/pvcnoded.sample.yaml`), parsed. */
export function sampleConfig(): Config {
  return parseConfig(sampleText(), 'pvcnoded.sample.yaml');
}

/** A context whose every port is a fake. */
export function fakePluginContext(opts: FakeContextOptions = {}): PluginContext {
  const files = opts.files ?? {};
  const base = contextBase({
    node: opts.node ?? 'pvchv1',
    isCoordinator: opts.isCoordinator ?? true,
    config: opts.config ?? sampleConfig(),
    logger: silentLogger(),
    clock: opts.clock ?? new VirtualClock(1_700_000_000_000),
    services: opts.services,
    ports: {
      exec: opts.exec ?? new FakeExec(),
      readFile: (path) => {
        const text = files[path];
        if (text === undefined) return Promise.reject(Object.assign(new Error(`ENOENT: no such file, open '${path}'`), { code: 'ENOENT' }));
        return Promise.resolve(text);
      },
      tcpRequest: (host, port, request) => (opts.tcp ?? (() => Promise.reject(new Error('connect ECONNREFUSED'))))(host, port, request),
      bmc: () => opts.bmc,
    },
  });
  return pluginContext(base, 'test', opts.signal ?? new AbortController().signal);
}
