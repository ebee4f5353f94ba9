import { paths, readClientNetworks, type ClientNetwork, type NetworkProblem, type NetworkTree, type ZkClient } from '@pvc/zk';
import { refused, usage } from '../errors.js';

/**
 * Finding networks for `pvc network ...`: the whole `/networks` tree read through
 * `readClientNetworks` of `@pvc/zk` (so every value goes through its codec and bad data is a
 * problem, never a crash). A network is named by its VNI or its description, as in the original.
 */

/** One problem as a line: `<key>: <what is wrong> (<what was done>)`. */
export function problemLine(p: NetworkProblem): string {
  return `bad data in Zookeeper at ${p.key}: ${p.problem} (${p.effect})`;
}

/** A network found by VNI or description, with the problems of its keys. */
export interface FoundNetwork {
  network: ClientNetwork;
  problems: NetworkProblem[];
  tree: NetworkTree;
}

/**
 * The network a user means: the one whose VNI is `ref` (digits), else the one whose description is
 * `ref`. A network the reader skipped for bad data is refused with its problems (nothing can be
 * done safely on it through pvc; fix or remove its keys). Unknown → exit 1 naming the networks.
 */
export async function findNetwork(zk: ZkClient, ref: string): Promise<FoundNetwork> {
  if (ref === '') throw usage('expected a network VNI or description, got ""');
  const tree = await readClientNetworks(zk);
  const network = tree.networks.find((n) => String(n.vni) === ref) ?? tree.networks.find((n) => n.description === ref);
  if (network) return { network, problems: tree.problems.filter((p) => p.vni === String(network.vni)), tree };
  const skipped = tree.problems.filter((p) => p.vni === ref && p.effect === 'network skipped');
  if (skipped.length > 0 || (/^\d+$/.test(ref) && (await zk.exists(paths.network(ref).root)) !== undefined)) {
    const why = skipped.map((p) => `${p.key}: ${p.problem}`).join('; ') || 'it could not be read';
    throw refused(`network ${ref} has bad data in Zookeeper and is skipped: ${why}`);
  }
  const known = tree.networks.map((n) => `${n.vni} (${n.description})`);
  throw refused(`no network with VNI or description "${ref}"${known.length ? ` (networks: ${known.join(', ')})` : ' (the cluster has no networks)'}`);
}

/** A limit as the original takes it: a regex, matched anywhere (a bad regex is matched literally). */
export function limitMatcher(limit: string | undefined): (text: string) => boolean {
  if (limit === undefined || limit === '') return () => true;
  let re: RegExp;
  try {
    re = new RegExp(limit);
  } catch {
    re = new RegExp(limit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
  return (text) => re.test(text);
}

/** `network list [limit]`: the limit matches the VNI or the description. */
export function matchesLimit(n: ClientNetwork, limit: string | undefined): boolean {
  const m = limitMatcher(limit);
  return m(String(n.vni)) || m(n.description);
}
