import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, VirtualClock, type Logger } from '@pvc/runtime';
import { fillMissingKeys } from './fill.js';
import { newDomainObject, newNetworkObject, newNodeObject } from './objects.js';
import { baseKeys, paths } from './schema.js';
import { FakeZkServer } from './testing/index.js';
import type { ZkClient, ZkOp, ZkOpResult } from './types.js';

const UUID = '0b6c3a5e-2f1d-4c7e-9a8b-1d2e3f4a5b6c';
const UUID2 = '1c7d4b6f-3a2e-4d8f-8b9c-2e3f4a5b6c7d';

function capture(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'test', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  return { logger, lines };
}

/** An initialised tree with one node, two VMs and one network, each complete. */
async function world() {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  const admin = await server.connect();
  for (const k of baseKeys()) await admin.ensurePath(k);
  const objects = [
    newNodeObject({ name: 'hv1', daemonMode: 'coordinator', nowMs: 1_700_000_000_000, staticData: '4 6.1 GNU/Linux x86_64', pvcVersion: '1.0.3', ipmi: { hostname: 'h', username: 'u', password: 'p' } }),
    newDomainObject({ uuid: UUID, name: 'web1', xml: '<domain/>', node: 'hv1', migrationMaxDowntimeMs: 1000, nodeLimit: ['hv1'] }),
    newDomainObject({ uuid: UUID2, name: 'web2', xml: '<domain/>', node: 'hv1' }),
    newNetworkObject({ vni: 100, description: 'clients', type: 'managed' }),
  ];
  for (const o of objects) await admin.createObject(o.root, o.entries);
  return { clock, server, zk, admin };
}

const n = paths.node('hv1');
const d = paths.domain(UUID);
const net = paths.network(100);

describe('fillMissingKeys', () => {
  it("creates each missing key with the original's default, logs it once, and touches nothing else", async () => {
    const { server, zk, admin } = await world();
    for (const p of [n.cpuLoad, n.monitoringHealth, n.networkStats, d.migrationMaxDowntime, d.nodeLimit, net.firewallIn]) await admin.delete(p);
    await admin.set(n.daemonState, 'run');
    const before = server.dump('/');
    const { logger, lines } = capture();

    const filled = await fillMissingKeys(zk, logger);

    const expected: Record<string, string> = {
      [n.cpuLoad]: '', [n.monitoringHealth]: '', [n.networkStats]: '',
      [d.migrationMaxDowntime]: '300', [d.nodeLimit]: '',
      [net.firewallIn]: '',
    };
    assert.deepEqual(Object.fromEntries(filled.map((f) => [f.path, f.value])), expected);
    assert.deepEqual(server.dump('/'), { ...before, ...expected }, 'only the missing keys were added');
    const logged = lines.filter((l) => typeof l.key === 'string');
    assert.deepEqual(logged.map((l) => [l.key, l.value]).sort(), Object.entries(expected).sort(), 'one line per filled key');
    assert.ok(logged.every((l) => l.level === 30 && String(l.msg).startsWith(`filled missing key ${String(l.key)}`)));
    const st = await admin.exists(n.daemonState);
    assert.equal(st?.version, 1, 'an existing key is not rewritten');

    const { logger: l2, lines: again } = capture();
    assert.deepEqual(await fillMissingKeys(zk, l2), [], 'a second run fills nothing');
    assert.deepEqual(again, []);
  });

  it("each object's keys are created in one transaction, parents before children", async () => {
    const { zk, admin } = await world();
    await admin.delete(net.firewallRules); // takes firewall_rules/in and /out with it
    await admin.delete(d.tags);
    const filled = await fillMissingKeys(zk, capture().logger);
    assert.deepEqual(filled.map((f) => f.path), [d.tags, net.firewallRules, net.firewallIn, net.firewallOut]);
    const zx = await Promise.all([net.firewallRules, net.firewallIn, net.firewallOut].map((p) => admin.exists(p)));
    assert.ok(zx.every((s) => s?.czxid === zx[0]?.czxid), 'one transaction per object');
  });

  it("OSDs get is_split False and pools tier default (the original's other two non-empty defaults)", async () => {
    const { server, zk, admin } = await world();
    await admin.ensurePath(paths.ceph.osd(0).node);
    await admin.set(paths.ceph.osd(0).node, 'hv1');
    await admin.ensurePath(paths.ceph.pool('vms').pgs);
    await admin.set(paths.ceph.pool('vms').pgs, '64');
    await fillMissingKeys(zk, capture().logger);
    const dump = server.dump('/ceph');
    assert.equal(dump[paths.ceph.osd(0).isSplit], 'False');
    assert.equal(dump[paths.ceph.osd(0).node], 'hv1');
    assert.equal(dump[paths.ceph.osd(0).fsidOsd], '');
    assert.equal(dump[paths.ceph.pool('vms').tier], 'default');
    assert.equal(dump[paths.ceph.pool('vms').pgs], '64');
  });

  it('a missing object parent (no /ceph/osds yet) is nothing to fill', async () => {
    const { zk, admin } = await world();
    await admin.delete(paths.ceph.root);
    assert.deepEqual(await fillMissingKeys(zk, capture().logger), []);
  });

  it('a key another writer creates meanwhile is not overwritten: the transaction fails and the object is checked again', async () => {
    const { zk, admin } = await world();
    await admin.delete(d.migrationMaxDowntime);
    await admin.delete(d.nodeLimit);
    // Between our exists() and our multi(), the API writes migration_max_downtime.
    const racing = withBeforeMulti(zk, async (ops, call) => {
      if (call === 1 && ops.some((o) => o.path === d.migrationMaxDowntime)) await admin.create(d.migrationMaxDowntime, '2000');
    });
    const { logger, lines } = capture();
    const filled = await fillMissingKeys(racing.client, logger);
    assert.deepEqual(filled, [{ path: d.nodeLimit, value: '' }]);
    assert.equal(await admin.read(d.migrationMaxDowntime), '2000', "the other writer's value stays");
    assert.equal(await admin.read(d.nodeLimit), '');
    assert.equal(racing.calls(), 2);
    assert.deepEqual(lines.map((l) => l.key), [d.nodeLimit]);
  });

  it('an object deleted meanwhile is skipped (not re-created)', async () => {
    const { zk, admin } = await world();
    await admin.delete(d.migrationMaxDowntime);
    const racing = withBeforeMulti(zk, async () => admin.delete(d.root));
    const { logger, lines } = capture();
    assert.deepEqual(await fillMissingKeys(racing.client, logger), []);
    assert.equal(await admin.exists(d.root), undefined);
    assert.deepEqual(lines, []);
  });

  it('an object that keeps losing the race is logged and left; the pass goes on to the others', async () => {
    const { zk, admin } = await world();
    await admin.delete(d.nodeLimit);
    await admin.delete(net.firewallIn);
    // Every multi for the VM fails as if the key had been created meanwhile.
    const racing = withBeforeMulti(zk, async (ops) => {
      if (ops.some((o) => o.path === d.nodeLimit)) throw await nodeExists(admin);
    });
    const { logger, lines } = capture();
    const filled = await fillMissingKeys(racing.client, logger);
    assert.deepEqual(filled, [{ path: net.firewallIn, value: '' }]);
    const warn = lines.find((l) => l.level === 40);
    assert.equal(warn?.object, UUID);
    assert.equal(warn?.kind, 'VM');
    assert.match(String(warn?.err), /NODE_EXISTS/);
  });

  it('a connection problem ends the pass with the error', async () => {
    const { server, zk, admin } = await world();
    await admin.delete(d.nodeLimit);
    server.failNextWrite({ code: 'CONNECTION_LOSS' });
    await assert.rejects(fillMissingKeys(zk, capture().logger), { code: 'CONNECTION_LOSS' });
  });
});

/** The NODE_EXISTS transaction error a real create of an existing key gives. */
async function nodeExists(admin: ZkClient): Promise<unknown> {
  try {
    await admin.multi([{ type: 'create', path: paths.nodes }]);
  } catch (err) {
    return err;
  }
  throw new Error('expected NODE_EXISTS');
}

/** A client whose `multi` first runs `hook` (another writer acting between our check and our commit). */
function withBeforeMulti(inner: ZkClient, hook: (ops: readonly ZkOp[], call: number) => Promise<unknown>): { client: ZkClient; calls: () => number } {
  let calls = 0;
  const client = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'multi') {
        return async (ops: readonly ZkOp[]): Promise<ZkOpResult[]> => {
          calls++;
          await hook(ops, calls);
          return target.multi(ops);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { client, calls: () => calls };
}
