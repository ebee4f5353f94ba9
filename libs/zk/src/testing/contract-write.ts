import assert from 'node:assert/strict';
import { it } from 'node:test';
import * as codec from '../codec.js';
import { ZkTransactionError } from '../errors.js';
import { newDomainObject, newNodeObject } from '../objects.js';
import { NODE_KEYS } from '../schema.js';
import type { ContractContext } from './contract-harness.js';
import { rejectsWith } from './contract-basic.js';

/** The original's write transaction, whole-object creation and value codecs through the client. */
export function registerWrites(ctx: ContractContext): void {
  it('write creates absent keys (parents earlier in the list) and sets present ones', async () => {
    const c = await ctx.client();
    await c.create(ctx.p('present'), 'old');
    await c.write([
      [ctx.p('present'), 'new'],
      [ctx.p('fresh'), 'parent'],
      [ctx.p('fresh/child'), 'kid'],
    ]);
    assert.equal(await c.read(ctx.p('present')), 'new');
    assert.equal(await c.read(ctx.p('fresh')), 'parent');
    assert.equal(await c.read(ctx.p('fresh/child')), 'kid');
    const v = (await c.exists(ctx.p('present')))?.version;
    await c.write([[ctx.p('present'), 'new']]);
    assert.equal((await c.exists(ctx.p('present')))?.version, (v ?? 0) + 1, 'the same value bumps the version');
  });

  it('write fails loudly and applies nothing when a parent is missing', async () => {
    const c = await ctx.client();
    await c.create(ctx.p('k'), 'before');
    const err = await c
      .write([
        [ctx.p('k'), 'after'],
        [ctx.p('no/parent'), 'x'],
      ])
      .catch((e: unknown) => e);
    assert.ok(err instanceof ZkTransactionError, String(err));
    assert.equal(err.code, 'NO_NODE');
    assert.equal(err.path, ctx.p('no/parent'));
    assert.equal(await c.read(ctx.p('k')), 'before');
  });

  it('createObject creates the root and all keys at once; NODE_EXISTS when it exists', async () => {
    const c = await ctx.client();
    const obj = newNodeObject({
      name: 'hv1',
      daemonMode: 'hypervisor',
      nowMs: 1_712_345_678_900,
      staticData: '8 6.1.0 debian x86_64',
      pvcVersion: '1.0.3',
      ipmi: { hostname: 'hv1-lom', username: 'admin', password: 'secret' },
    });
    const root = ctx.p('hv1');
    await c.createObject(root, obj.entries);
    assert.equal(await c.read(root), 'hypervisor');
    assert.equal(await c.read(`${root}/${NODE_KEYS.keepalive}`), '1712345678');
    assert.equal(await c.read(`${root}/${NODE_KEYS.routerState}`), 'client');
    assert.equal(await c.read(`${root}/${NODE_KEYS.cpuLoad}`), '0.0');
    assert.equal(await c.read(`${root}/${NODE_KEYS.sriovPf}`), '');
    assert.equal((await c.children(root)).length, obj.entries.length - 1 - 2, 'sriov/pf and sriov/vf sit below sriov');
    await rejectsWith(c.createObject(root, obj.entries), 'NODE_EXISTS');
  });

  it('a children watcher never sees half an object', async () => {
    const writer = await ctx.client();
    const reader = await ctx.client();
    await writer.create(ctx.p('domains'), '');
    const seen: { uuid: string; keys: number }[] = [];
    const unsub = reader.watchChildren(ctx.p('domains'), async (kids) => {
      for (const uuid of kids ?? []) {
        if (seen.some((s) => s.uuid === uuid)) continue;
        // Read at once, like the original's ChildrenWatch handlers do.
        seen.push({ uuid, keys: (await reader.children(ctx.p(`domains/${uuid}`))).length });
      }
    });
    const defs = ['u1', 'u2', 'u3'].map((uuid) =>
      newDomainObject({ uuid, name: `vm-${uuid}`, xml: '<domain/>', node: 'hv1', tags: [{ name: 't', type: 'user', protected: false }] }),
    );
    await Promise.all(defs.map((d, i) => writer.createObject(ctx.p(`domains/u${i + 1}`), d.entries)));
    await ctx.eventually('all three VMs were seen', () => seen.length === 3);
    unsub();
    const expected = new Set(defs[0]?.entries.filter(([k]) => k !== '' && !k.includes('/')).map(([k]) => k)).size;
    for (const s of seen) assert.equal(s.keys, expected, `VM ${s.uuid} was seen with all ${expected} keys`);
  });

  it('codec values round-trip through the server', async () => {
    const c = await ctx.client();
    const cases: [string, string, (raw: string, key: string) => unknown, unknown][] = [
      ['none', codec.nullable(codec.text).encode(null), codec.nullable(codec.text).decode, null],
      ['bool', codec.bool.encode(true), codec.bool.decode, true],
      ['maint', codec.strtobool.encode(false), codec.strtobool.decode, false],
      ['int', codec.int.encode(1712345678), codec.int.decode, 1712345678],
      ['float', codec.float.encode(1712345678.123456), codec.float.decode, 1712345678.123456],
      ['load', codec.float.encode(0.5), codec.float.decode, 0.5],
      ['space', codec.spaceList.encode(['a', 'b']), codec.spaceList.decode, ['a', 'b']],
      ['comma', codec.commaList.encode(['rbd/a', 'rbd/b']), codec.commaList.decode, ['rbd/a', 'rbd/b']],
      ['json', codec.json.encode({ cpu: 1.5, nics: ['a'] }), codec.json.decode, { cpu: 1.5, nics: ['a'] }],
    ];
    await c.write([[ctx.p('codec'), ''], ...cases.map(([k, raw]) => [ctx.p(`codec/${k}`), raw] as const)]);
    for (const [k, raw, decode, value] of cases) {
      const back = await c.read(ctx.p(`codec/${k}`));
      assert.equal(back, raw, `${k} stored verbatim`);
      assert.deepEqual(decode(back ?? '', k), value, `${k} decodes`);
    }
    assert.equal(await c.read(ctx.p('codec/float')), '1712345678.123456');
    assert.equal(await c.read(ctx.p('codec/none')), 'None');
  });
}
