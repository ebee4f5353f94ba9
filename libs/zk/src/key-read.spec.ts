import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { createLogger, VirtualClock, type Logger } from '@pvc/runtime';
import {
  decodeKey, readKey, readKeyIfExists, readKeys, readKeyWithStat, resetBadValueReports, setBadValueLogger, watchKey,
} from './key-read.js';
import { clusterKeys, domainKeys, networkKeys, nodeKeys } from './keys.js';
import { FakeZkServer } from './testing/index.js';
import type { ZkClient } from './types.js';

const UUID = '0b6c3a5e-2f1d-4c7e-9a8b-1d2e3f4a5b6c';
const vm = domainKeys(UUID);
const node = nodeKeys('hv1');

/** A logger whose JSON lines are collected. */
function capture(): { logger: Logger; lines: Record<string, unknown>[]; warns: () => Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'test', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  return { logger, lines, warns: () => lines.filter((l) => l.level === 40) };
}

async function world(): Promise<{ clock: VirtualClock; zk: ZkClient; other: ZkClient; set: (path: string, value: string) => Promise<void> }> {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  const other = await server.connect();
  const set = async (path: string, value: string): Promise<void> => {
    await other.ensurePath(path);
    await other.set(path, value);
  };
  return { clock, zk, other, set };
}

beforeEach(() => {
  resetBadValueReports();
  setBadValueLogger(undefined);
});

describe('decodeKey', () => {
  it('an absent key is its fallback, without a log line', () => {
    const { logger, lines } = capture();
    assert.equal(decodeKey(vm.migrationMaxDowntime, undefined, logger), 300);
    assert.equal(decodeKey(node.daemonState, undefined, logger), undefined, 'unknown state');
    assert.deepEqual(decodeKey(vm.nodeLimit, undefined, logger), []);
    assert.equal(decodeKey(clusterKeys.primaryNode, undefined, logger), 'none');
    assert.deepEqual(lines, []);
  });

  it('an empty value (a key the schema fill created) is the fallback, silently', () => {
    const { logger, lines } = capture();
    assert.equal(decodeKey(vm.migrationMaxDowntime, '', logger), 300);
    assert.equal(decodeKey(node.monitoringHealth, '', logger), null);
    assert.equal(decodeKey(node.keepalive, '  ', logger), 0);
    assert.equal(decodeKey(vm.stats, '', logger), null);
    assert.equal(decodeKey(node.daemonState, '', logger), undefined);
    assert.deepEqual(lines, []);
  });

  it('a good value decodes through the codec', () => {
    assert.equal(decodeKey(vm.migrationMaxDowntime, '1500'), 1500);
    assert.equal(decodeKey(node.daemonState, 'run'), 'run');
    assert.equal(decodeKey(node.monitoringHealth, 'None'), null);
    assert.equal(decodeKey(node.monitoringHealth, '87'), 87);
    assert.deepEqual(decodeKey(node.runningDomains, '0'), []);
    assert.deepEqual(decodeKey(node.staticData, '4 6.1.0 GNU/Linux x86_64'), { cpuCount: 4, kernel: '6.1.0', os: 'GNU/Linux', arch: 'x86_64' });
    assert.equal(decodeKey(networkKeys(100).mtu, ''), null, 'emptyOr: empty is a value here');
  });

  it('a bad value is the fallback and ONE warning naming the key and the value, however often it is read', async () => {
    const { zk, set } = await world();
    const { logger, warns } = capture();
    await set(vm.migrationMaxDowntime.path, 'fast');
    for (let i = 0; i < 3; i++) assert.equal(await readKey(zk, vm.migrationMaxDowntime, { logger }), 300);
    assert.equal(warns().length, 1);
    const w = warns()[0];
    assert.equal(w?.key, vm.migrationMaxDowntime.path);
    assert.equal(w?.value, 'fast');
    assert.equal(w?.expected, 'an integer');
    assert.equal(w?.fallback, '300');
    assert.match(String(w?.msg), new RegExp(`${vm.migrationMaxDowntime.path}: "fast" is not an integer`));
    // Another bad value of the same key is a new report; the first stays reported.
    await set(vm.migrationMaxDowntime.path, 'slow');
    await readKey(zk, vm.migrationMaxDowntime, { logger });
    await set(vm.migrationMaxDowntime.path, 'fast');
    await readKey(zk, vm.migrationMaxDowntime, { logger });
    assert.deepEqual(warns().map((l) => l.value), ['fast', 'slow']);
  });

  it('the warning goes to the logger given to setBadValueLogger when the call passes none', () => {
    const { logger, warns } = capture();
    setBadValueLogger(logger);
    assert.equal(decodeKey(node.daemonState, 'sleeping'), undefined);
    assert.equal(warns()[0]?.key, node.daemonState.path);
    assert.equal(warns()[0]?.fallback, 'unknown');
    setBadValueLogger(undefined);
    assert.equal(decodeKey(node.routerState, 'boss'), undefined, 'no logger: still the fallback');
  });

  it('a very long bad value is shortened in the log line', () => {
    const { logger, warns } = capture();
    decodeKey(node.networkStats, `{${'x'.repeat(500)}`, logger);
    assert.equal(String(warns()[0]?.value).length, 201);
  });
});

describe('codecs as the key table uses them', () => {
  it('commaList (node_limit, rbdlist, name_servers) reads None and "" as the empty list', () => {
    const { logger, lines } = capture();
    for (const spec of [vm.nodeLimit, vm.rbdList, networkKeys(100).nameServers]) {
      assert.deepEqual(decodeKey(spec, 'None', logger), []);
      assert.deepEqual(decodeKey(spec, '', logger), []);
    }
    assert.deepEqual(decodeKey(vm.nodeLimit, 'hv1, hv2,,hv3', logger), ['hv1', 'hv2', 'hv3']);
    assert.deepEqual(decodeKey(vm.rbdList, 'vms/web1_disk0', logger), ['vms/web1_disk0']);
    assert.deepEqual(lines, []);
  });

  it('lowerOneOf (migration_method, node_selector) reads None and any case', () => {
    const { logger, warns } = capture();
    assert.equal(decodeKey(vm.migrationMethod, 'None', logger), 'none');
    assert.equal(decodeKey(vm.migrationMethod, 'LIVE', logger), 'live');
    assert.equal(decodeKey(vm.migrationMethod, 'Shutdown', logger), 'shutdown');
    assert.equal(decodeKey(vm.nodeSelector, 'None', logger), 'none');
    assert.equal(decodeKey(vm.nodeSelector, 'MemProv', logger), 'memprov');
    assert.equal(decodeKey(clusterKeys.migrationTargetSelector, 'VCPUS', logger), 'vcpus');
    assert.equal(warns().length, 0);
    assert.equal(decodeKey(vm.migrationMethod, 'teleport', logger), 'none');
    assert.equal(warns().length, 1);
  });

  it('maintenance is read with strtobool: every spelling Python accepts', () => {
    const { logger, warns } = capture();
    for (const t of ['true', 'True', 'TRUE', 'yes', 'Y', 't', 'on', '1']) assert.equal(decodeKey(clusterKeys.maintenance, t, logger), true, t);
    for (const f of ['false', 'False', 'no', 'N', 'f', 'off', 'OFF', '0']) assert.equal(decodeKey(clusterKeys.maintenance, f, logger), false, f);
    assert.equal(decodeKey(clusterKeys.maintenance, '', logger), false);
    assert.equal(warns().length, 0);
    assert.equal(decodeKey(clusterKeys.maintenance, 'maybe', logger), false, 'bad: not in maintenance (the default)');
    assert.equal(warns()[0]?.value, 'maybe');
  });
});

describe('readers', () => {
  it('readKeys returns the values in the order of the keys, each through its codec', async () => {
    const { zk, set } = await world();
    await set(node.daemonState.path, 'run');
    await set(node.memTotal.path, '32768');
    await set(node.cpuLoad.path, '1.25');
    const [load, state, total, free, health] = await readKeys(zk, [node.cpuLoad, node.daemonState, node.memTotal, node.memFree, node.monitoringHealth]);
    assert.deepEqual([load, state, total, free, health], [1.25, 'run', 32768, 0, null]);
  });

  it('readKeyIfExists: undefined when absent, the fallback when empty; readKeyWithStat gives the version', async () => {
    const { zk, set } = await world();
    assert.equal(await readKeyIfExists(zk, vm.migrationMaxDowntime), undefined);
    assert.equal(await readKeyWithStat(zk, vm.migrationMaxDowntime), undefined);
    await set(vm.migrationMaxDowntime.path, '');
    assert.equal(await readKeyIfExists(zk, vm.migrationMaxDowntime), 300);
    await set(vm.migrationMaxDowntime.path, '900');
    const snap = await readKeyWithStat(zk, vm.migrationMaxDowntime);
    assert.equal(snap?.value, 900);
    assert.equal(snap?.stat.version, 2);
  });

  it('watchKey delivers decoded values (undefined while absent, the fallback for a bad value)', async () => {
    const { clock, zk, other } = await world();
    const { logger, warns } = capture();
    await other.ensurePath(node.root.path);
    const seen: unknown[] = [];
    const stop = watchKey(zk, node.daemonState, (v, snap) => void seen.push([v, snap?.data]), logger);
    await clock.advance(0);
    await other.create(node.daemonState.path, 'init');
    await clock.advance(0);
    await other.set(node.daemonState.path, 'run');
    await clock.advance(0);
    await other.set(node.daemonState.path, 'zombie');
    await clock.advance(0);
    await other.delete(node.daemonState.path);
    await clock.advance(0);
    stop();
    await other.create(node.daemonState.path, 'stop');
    await clock.advance(0);
    assert.deepEqual(seen, [[undefined, undefined], ['init', 'init'], ['run', 'run'], [undefined, 'zombie'], [undefined, undefined]]);
    assert.equal(warns().length, 1);
  });
});
