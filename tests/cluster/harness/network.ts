import type { Exec } from '@pvc/runtime';
import { ClusterError } from './errors.js';
import { NETWORKS, HOST_NETWORKS } from './plan.js';
import type { ClusterPlan, HostPlan } from './plan.js';
import { runOk } from './run.js';
import type { NetworkName } from './types.js';

/**
 * Fails when one of the cluster's subnets is already routed in the root namespace (another cluster
 * with the same subnet slot, or a real network): the message names the subnet and the fix.
 */
export async function assertSubnetsFree(plan: ClusterPlan, exec: Exec): Promise<void> {
  const routes = (await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['-4', '-o', 'route', 'show'])).stdout;
  for (const net of NETWORKS) {
    const cidr = `${plan.networks[net].prefix}.0/24`;
    if (routes.split('\n').some((l) => l.startsWith(`${cidr} `))) {
      throw new ClusterError(
        'CLUSTER_SUBNET_IN_USE',
        `subnet ${cidr} (${net} network of cluster "${plan.name}") is already routed here; ` +
          `pick another "subnet" option (0–63) or sweep the cluster that owns it`,
      );
    }
  }
}

/** Creates the four bridges in the root namespace, each with the root's .254 address. */
export async function createBridges(plan: ClusterPlan, exec: Exec): Promise<void> {
  for (const net of NETWORKS) {
    const { bridge, rootIp } = plan.networks[net];
    // Bridged frames must not traverse the root namespace's iptables (bridge-nf-call-iptables=1 here).
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', [
      'link', 'add', bridge, 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0',
      'nf_call_iptables', '0', 'nf_call_ip6tables', '0', 'nf_call_arptables', '0',
    ]);
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['addr', 'add', `${rootIp}/24`, 'dev', bridge]);
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['link', 'set', bridge, 'up']);
  }
}

/**
 * Creates the host's network namespace and one veth per network: the root end (e.g. pvct-1-c)
 * enslaved to the bridge, the host end named after the network ("cluster", "storage", …). The host
 * end gets the host's address and is set up, except with `bareLinks`: then `cluster`, `storage`
 * and `upstream` stay bare (no address, down) for the node services' bring-up to configure. The
 * `ipmi` end is always configured: the BMC (ipmi_sim) listens on it, outside the host's power.
 */
export async function createHostNetwork(plan: ClusterPlan, host: HostPlan, exec: Exec): Promise<void> {
  const ns = host.netns;
  await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['netns', 'add', ns]);
  await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  for (const net of NETWORKS) {
    const root = host.veths[net];
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['link', 'add', root, 'type', 'veth', 'peer', 'name', net, 'netns', ns]);
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['link', 'set', root, 'master', plan.networks[net].bridge, 'up']);
    if (plan.bareLinks && HOST_NETWORKS.includes(net)) continue;
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['-n', ns, 'addr', 'add', `${host.ips[net]}/24`, 'dev', net]);
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['-n', ns, 'link', 'set', net, 'up']);
  }
}

/**
 * Takes the root end of the host's veths down (or up). The host keeps its addresses and sees
 * NO-CARRIER, like a pulled cable; the default set leaves the BMC network alone.
 */
export async function setHostLinks(
  host: HostPlan,
  exec: Exec,
  up: boolean,
  nets: readonly NetworkName[] = HOST_NETWORKS,
): Promise<void> {
  for (const net of nets) {
    if (!NETWORKS.includes(net)) throw new ClusterError('CLUSTER_NETWORK', `unknown network "${String(net)}"`);
    await runOk(exec, 'CLUSTER_NETWORK', 'ip', ['link', 'set', host.veths[net], up ? 'up' : 'down']);
  }
}
