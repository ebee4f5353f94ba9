/**
 * Builds the {@link PluginContext} each plugin call receives: the host ports (Exec, file reads,
 * TCP, this node's BMC) bound to the call's abort signal, a redacted config and a child logger.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { redactedConfig } from '@pvc/config';
import type { Config } from '@pvc/config';
import { bmcName, createIpmitoolIpmi } from '@pvc/ipmi';
import type { Clock, Exec, Logger } from '@pvc/runtime';
import { tcpRequest } from './host/tcp.js';
import type { PluginBmc, PluginContext, PluginServiceState } from './types.js';

/** Default bound of one `ctx.exec` call that gives none, ms. */
export const DEFAULT_PLUGIN_EXEC_TIMEOUT_MS = 10_000;

/** The side-effect ports behind every plugin context; tests replace each one. */
export interface HostPorts {
  exec: Exec;
  readFile(path: string, signal: AbortSignal): Promise<string>;
  tcpRequest(host: string, port: number, request: string, opts: { timeoutMs?: number; signal: AbortSignal }): Promise<string>;
  /** Builds this node's BMC view for a signal; undefined when no IPMI host is configured. */
  bmc(signal: AbortSignal): PluginBmc | undefined;
}

/** The real ports: `exec` runs commands, files come from disk, TCP is real, IPMI via ipmitool. */
export function realHostPorts(exec: Exec, config: Config): HostPorts {
  const ipmi = createIpmitoolIpmi(exec);
  const { host, user, pass, port } = config.system.fencing.ipmi;
  const target = { host, user, pass, port };
  return {
    exec,
    readFile: (path, signal) => readFile(path, { encoding: 'utf8', signal }),
    tcpRequest: (h, p, request, opts) => tcpRequest(h, p, request, opts),
    bmc: (signal) =>
      host === ''
        ? undefined
        : { name: bmcName(target), powerStatus: (opts = {}) => ipmi.powerStatus(target, { ...opts, signal }) },
  };
}

/** What stays the same across calls. */
export interface ContextBase {
  node: string;
  isCoordinator: boolean;
  config: Config;
  ports: HostPorts;
  logger: Logger;
  clock: Clock;
  /** The keepalive's view of the local services (`ctx.services()`); none → empty. */
  services?: () => readonly PluginServiceState[];
}

/** Freezes the redacted config once, for every context of a monitor. */
export function contextBase(base: ContextBase): ContextBase {
  return { ...base, config: Object.freeze(redactedConfig(base.config)) };
}

/** The context of one call of one plugin. */
export function pluginContext(base: ContextBase, plugin: string, signal: AbortSignal): PluginContext {
  const { ports } = base;
  return {
    node: base.node,
    isCoordinator: base.isCoordinator,
    config: base.config,
    exec: (command, args, opts = {}) =>
      ports.exec.run(command, args, { timeoutMs: opts.timeoutMs ?? DEFAULT_PLUGIN_EXEC_TIMEOUT_MS, signal }),
    readFile: (path) => ports.readFile(path, signal),
    tcpRequest: (host, port, request, opts = {}) => ports.tcpRequest(host, port, request, { ...opts, signal }),
    bmc: ports.bmc(signal),
    logger: base.logger.child({ plugin }),
    services: () => base.services?.() ?? [],
    now: () => base.clock.now(),
    signal,
  };
}
