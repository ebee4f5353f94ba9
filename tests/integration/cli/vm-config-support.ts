/**
 * Helpers of the `vm define|modify|...` CLI tests: a whole-subtree dump (to check that nothing was
 * written), a VM XML with RBD disks, and a fake vmd that reacts to `state` writes like the real
 * one (restart → start; stop → off the node's runningdomains, state stop).
 */
import assert from 'node:assert/strict';
import { codec, paths, type ZkClient } from '@pvc/zk';
import type { CliRig } from './support.js';

export const U1 = '0de30000-0000-4000-8000-000000000001';
export const U2 = '0de30000-0000-4000-8000-000000000002';

/** Every key under `root` (root included) with its data; {} when root is absent. */
export async function dumpTree(zk: ZkClient, root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string): Promise<void> => {
    const data = await zk.read(path);
    if (data === undefined) return;
    out[path] = data;
    for (const c of (await zk.children(path)).sort()) await walk(`${path}/${c}`);
  };
  await walk(root);
  return out;
}

/** A domain XML with two RBD disks and a file disk (only the RBD ones go to rbdlist). */
export function rbdXml(name: string, uuid?: string): string {
  const disk = (n: number): string =>
    `<disk type='network' device='disk'><source protocol='rbd' name='vms/${name.replace(/new$/, '')}_disk${n}'/><target dev='sd${'ab'[n] ?? 'c'}'/></disk>`;
  return [
    `<domain type='qemu'><name>${name}</name>${uuid ? `<uuid>${uuid}</uuid>` : ''}`,
    `<memory unit='GiB'>1</memory><vcpu>1</vcpu><os><type>hvm</type></os><devices>`,
    disk(0), disk(1), `<disk type='file' device='disk'><source file='/tmp/x.img'/><target dev='vda'/></disk>`,
    `<interface type='bridge'><mac address='52:54:00:AA:00:01'/></interface></devices></domain>`,
  ].join('\n');
}

/** Marks a VM running on `node` (state start, listed in its runningdomains). */
export async function setRunning(zk: ZkClient, uuid: string, node: string): Promise<void> {
  await zk.write([[paths.domain(uuid).state, 'start'], [paths.node(node).runningDomains, codec.runningDomains.encode([uuid])]]);
}

/** A fake vmd for one VM on `node`; `seen` lists the state values its watch saw. */
export function fakeVmd(zk: ZkClient, uuid: string, node: string, stopDelayMs = 0): { seen: string[]; stop(): void } {
  const seen: string[] = [];
  const d = paths.domain(uuid);
  const react = async (state: string): Promise<void> => {
    if (state === 'restart') await zk.write([[d.state, 'start']]);
    if (state === 'stop') {
      await new Promise((r) => setTimeout(r, stopDelayMs));
      const k = paths.node(node).runningDomains;
      const list = codec.runningDomains.decode((await zk.read(k)) ?? '', k).filter((u) => u !== uuid);
      await zk.write([[k, codec.runningDomains.encode(list)]]);
    }
  };
  const unwatch = zk.watchData(d.state, async (snap) => {
    if (snap === undefined) return;
    seen.push(snap.data);
    await react(snap.data).catch(() => undefined);
  });
  return { seen, stop: unwatch };
}

/**
 * Runs pvc and expects exit `code`, a one-line message matching `re` on stderr, and no change
 * anywhere under /domains (nothing written on bad input).
 */
export async function expectRefusedUnchanged(rig: CliRig, args: string[], code: number, re: RegExp): Promise<void> {
  const before = await dumpTree(rig.zk, paths.domains);
  const r = await rig.pvc(args);
  assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
  assert.match(r.stderr, re);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.deepEqual(await dumpTree(rig.zk, paths.domains), before);
}
