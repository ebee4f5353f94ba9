// deploy/systemd: one unit per service plus pvc.target, checked by `systemd-analyze verify`
// (which also checks that each ExecStart binary exists: /usr/bin/node, Debian's nodejs), and the
// properties the design needs: Restart=on-failure, a journald identifier per service, the
// supervisor as Type=notify, and the ordering that makes the stop order keepaliled, vmd, netd, cephd.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDir } from './support.js';

const DIR = join(ROOT, 'deploy', 'systemd');
const SERVICES = ['supervisor', 'netd', 'vmd', 'cephd', 'keepaliled'];
const ANALYZE = '/usr/bin/systemd-analyze';

function verify(files: string[]): { status: number | null; out: string } {
  const r = spawnSync(ANALYZE, ['verify', '--man=no', ...files], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function directive(unit: string, key: string): string[] {
  return readFileSync(join(DIR, unit), 'utf8').split('\n').filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));
}

test('systemd-analyze verify passes on every unit and the target', { skip: existsSync(ANALYZE) ? false : `${ANALYZE} is not installed (apt-get install systemd)` }, () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.service') || f.endsWith('.target')).sort();
  assert.deepEqual(files, ['pvc-cephd.service', 'pvc-keepaliled.service', 'pvc-netd.service', 'pvc-supervisor.service', 'pvc-vmd.service', 'pvc.target']);
  const r = verify(files.map((f) => join(DIR, f)));
  assert.equal(r.status, 0, r.out);
  assert.equal(r.out.trim(), '', `verify printed warnings:\n${r.out}`);
});

test('verify is a real check: a unit with a missing ExecStart binary fails it', { skip: existsSync(ANALYZE) ? false : `${ANALYZE} is not installed` }, () => {
  const tmp = tempDir('pvc-units-');
  try {
    const bad = join(tmp.dir, 'pvc-vmd.service');
    copyFileSync(join(DIR, 'pvc-vmd.service'), bad);
    writeFileSync(bad, readFileSync(bad, 'utf8').replace('/usr/bin/node', '/usr/bin/no-such-node'));
    const r = verify([bad]);
    assert.notEqual(r.status, 0);
    assert.match(r.out, /no-such-node/);
  } finally {
    tmp.remove();
  }
});

test('units: Restart=on-failure, own journald identifier, PartOf the target, ordered after the supervisor', () => {
  for (const s of SERVICES) {
    const unit = `pvc-${s}.service`;
    assert.deepEqual(directive(unit, 'Restart'), ['on-failure'], unit);
    assert.deepEqual(directive(unit, 'SyslogIdentifier'), [`pvc-${s}`], unit);
    assert.deepEqual(directive(unit, 'PartOf'), ['pvc.target'], unit);
    assert.match(directive(unit, 'ExecStart')[0] ?? '', new RegExp(`^/usr/bin/node /usr/lib/pvc/${s}/main\\.mjs .*--config /etc/pvc/pvcnoded\\.yaml`));
    if (s !== 'supervisor') {
      assert.match(directive(unit, 'After')[0] ?? '', /pvc-supervisor\.service/, unit);
      assert.deepEqual(directive(unit, 'Requires'), [], `${unit}: Requires= would stop it with the supervisor`);
    }
  }
  assert.deepEqual(directive('pvc-supervisor.service', 'Type'), ['notify']);
  assert.deepEqual(directive('pvc-supervisor.service', 'NotifyAccess'), ['all']);
  assert.match(directive('pvc-supervisor.service', 'ExecStart')[0] ?? '', /--mode systemd/);
});

test('ordering gives the stop order keepaliled, vmd, netd, cephd (systemd stops in reverse start order)', () => {
  const after = (s: string) => (directive(`pvc-${s}.service`, 'After')[0] ?? '').split(/\s+/);
  const startsAfter = (a: string, b: string) => after(a).includes(`pvc-${b}.service`);
  assert.ok(startsAfter('keepaliled', 'vmd') && startsAfter('keepaliled', 'netd') && startsAfter('keepaliled', 'cephd'));
  assert.ok(startsAfter('vmd', 'netd') && startsAfter('vmd', 'cephd'));
  assert.ok(startsAfter('netd', 'cephd'));
});
