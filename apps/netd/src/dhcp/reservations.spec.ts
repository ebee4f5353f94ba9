import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { rejectionOf, withTempDir } from '@pvc/runtime';
import { DhcpError } from './errors.js';
import { planReservations, syncReservations } from './reservations.js';

const A = { mac: '52:54:00:00:00:0a', ipaddr: '10.0.0.10' };
const B = { mac: '52:54:00:00:00:0b', ipaddr: '10.0.0.11' };

test('plan: write what is missing or different, remove what is not wanted', () => {
  const present = new Map([[A.mac, `${A.mac},10.0.0.99`], ['52:54:00:00:00:0c', 'x']]);
  assert.deepEqual(planReservations('1', present, [A, B]), {
    write: [{ file: A.mac, content: `${A.mac},10.0.0.10` }, { file: B.mac, content: `${B.mac},10.0.0.11` }],
    remove: ['52:54:00:00:00:0c'],
  });
  assert.deepEqual(planReservations('1', new Map([[A.mac, `${A.mac},10.0.0.10`]]), [A]), { write: [], remove: [] });
});

test('plan: a MAC unusable as a file name or a bad address is refused with the key', async () => {
  const bad = await rejectionOf(Promise.resolve().then(() => planReservations('7', new Map(), [{ mac: '../x', ipaddr: '10.0.0.1' }])), DhcpError);
  assert.match(bad.message, /\/networks\/7\/dhcp4_reservations\/\.\.\/x/);
  const ip = await rejectionOf(Promise.resolve().then(() => planReservations('7', new Map(), [{ mac: A.mac, ipaddr: 'x y' }])), DhcpError);
  assert.match(ip.message, /ipaddr: "x y" is not an address/);
});

test('sync: one file per MAC holding mac,ip; dot-files left alone; reports whether anything changed', async () => {
  await withTempDir('pvc-res-', async (tmp) => {
    const dir = join(tmp, 'hosts');
    assert.equal(await syncReservations('1', dir, [A, B]), true);
    assert.equal(await readFile(join(dir, A.mac), 'utf8'), `${A.mac},10.0.0.10`);
    assert.equal(await syncReservations('1', dir, [A, B]), false);
    await writeFile(join(dir, '.keep'), '');
    assert.equal(await syncReservations('1', dir, [B]), true);
    assert.deepEqual((await readdir(dir)).sort(), ['.keep', B.mac]);
  });
});
