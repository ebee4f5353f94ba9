import type { Config } from '@pvc/config';
import type { Logger } from '@pvc/runtime';

/** One step of host interface set-up, as the command that would perform it. */
export interface InterfaceStep {
  readonly description: string;
  readonly command: readonly string[];
}

function bridgeSteps(bridge: string, device: string, mtu: number, cidr: string | undefined): InterfaceStep[] {
  const steps: InterfaceStep[] = [
    { description: `bridge ${bridge} over ${device}`, command: ['ip', 'link', 'add', bridge, 'type', 'bridge'] },
    { description: `${device} into ${bridge}`, command: ['ip', 'link', 'set', device, 'master', bridge] },
    { description: `${bridge} MTU ${mtu}, up`, command: ['ip', 'link', 'set', bridge, 'mtu', String(mtu), 'up'] },
  ];
  if (cidr) steps.push({ description: `${cidr} on ${bridge}`, command: ['ip', 'address', 'add', cidr, 'dev', bridge] });
  return steps;
}

/**
 * The host interface set-up of the original (`setup_interfaces`), as a plan: the cluster device
 * and `brcluster` with the node's cluster address; storage and upstream likewise (`brstorage`,
 * `brupstream`), or only their addresses on `brcluster` when they share the cluster device; the
 * default route via the upstream gateway. Empty when networking is disabled. (SR-IOV PF set-up
 * is not in this plan yet.)
 */
export function planHostInterfaces(config: Config): InterfaceStep[] {
  const net = config.system.configuration.networking;
  if (!config.functions.enable_networking || net === undefined) return [];
  const c = net.cluster;
  const steps: InterfaceStep[] = [
    { description: `${c.device} MTU ${c.mtu}, up`, command: ['ip', 'link', 'set', c.device, 'mtu', String(c.mtu), 'up'] },
    ...bridgeSteps('brcluster', c.device, c.mtu, c.resolved?.cidr),
  ];
  for (const [name, bridge] of [['storage', 'brstorage'], ['upstream', 'brupstream']] as const) {
    const n = net[name];
    if (n.device === c.device) {
      if (n.resolved && n.resolved.cidr !== c.resolved?.cidr) {
        steps.push({ description: `${name} ${n.resolved.cidr} on brcluster`, command: ['ip', 'address', 'add', n.resolved.cidr, 'dev', 'brcluster'] });
      }
      continue;
    }
    steps.push({ description: `${n.device} MTU ${n.mtu}, up`, command: ['ip', 'link', 'set', n.device, 'mtu', String(n.mtu), 'up'] });
    steps.push(...bridgeSteps(bridge, n.device, n.mtu, n.resolved?.cidr));
  }
  const gw = config.cluster.networks?.upstream.gateway;
  if (gw) {
    const dev = net.upstream.device === c.device ? 'brcluster' : 'brupstream';
    steps.push({ description: `default route via ${gw}`, command: ['ip', 'route', 'add', 'default', 'via', gw, 'dev', dev] });
  }
  return steps;
}

/**
 * NOT YET IMPLEMENTED: host bridges and addresses are not changed. This logs, step by step, what
 * the set-up would do ({@link planHostInterfaces}) and returns the plan; a later issue (netd's
 * host networking) applies it through the Exec port. Until then the host's interfaces must be set
 * up by other means (the test harness does it for its hosts).
 */
export function configureHostInterfaces(config: Config, logger: Logger): InterfaceStep[] {
  const plan = planHostInterfaces(config);
  for (const step of plan) {
    logger.info({ step: step.description, command: step.command.join(' '), applied: false }, 'host interface step not applied (not implemented yet)');
  }
  return plan;
}
