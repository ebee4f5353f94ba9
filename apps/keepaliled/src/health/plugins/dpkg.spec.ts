import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeExec, VirtualClock } from '@pvc/runtime';
import { fakePluginContext } from '../fake-context.js';
import { createDpkgPlugin, parseAudit, parseObsoleteConffiles, parseUpgradable, UPGRADABLE_TTL_MS } from './dpkg.js';

const AUDIT = [
  'The following packages are only half configured, probably due to problems',
  'configuring them the first time.  The configuration should be retried using',
  'dpkg --configure <package> or the configure menu option in dselect:',
  ' libvirt-daemon  Virtualization daemon',
  ' zookeeper       High-performance coordination service',
  '',
].join('\n');
const UPGRADABLE = [
  'Listing...',
  'zip/oldstable-security 3.0-13+deb12u1 amd64 [upgradable from: 3.0-13]',
  'unzip/oldstable-security 6.0-28+deb12u1 amd64 [upgradable from: 6.0-28]',
  '',
].join('\n');
const CONFFILES = ' /etc/adduser.conf cc3493ecd2d09837ffdcc3e25fdfff18\n\n /etc/old.conf 11a06baf8245fd8d690b99024d228c1f obsolete\n';

function exec(opts: { audit?: string; auditCode?: number; upgradable?: string; conffiles?: string } = {}): FakeExec {
  return new FakeExec()
    .on('dpkg --audit', { exitCode: opts.auditCode ?? (opts.audit ? 1 : 0), stdout: opts.audit ?? '' })
    .on('dpkg-query -W', { stdout: opts.conffiles ?? ' /etc/adduser.conf cc3493ecd2d09837ffdcc3e25fdfff18\n' })
    .on('apt list --upgradable', { stdout: opts.upgradable ?? 'Listing...\n', stderr: 'WARNING: apt does not have a stable CLI interface.\n' });
}
const files = { '/etc/debian_version': '12.13\n' };

describe('dpkg plugin', () => {
  it('healthy: nothing to report', async () => {
    const r = await createDpkgPlugin().run(fakePluginContext({ exec: exec(), files }));
    assert.equal(r.delta, 0);
    assert.equal(r.message, 'Debian 12.13; obsolete conffiles: 0; packages inconsistent: 0, upgradable: 0');
  });

  it('unhealthy: +1 per category, whatever the counts', async () => {
    const r = await createDpkgPlugin().run(fakePluginContext({ exec: exec({ audit: AUDIT, upgradable: UPGRADABLE, conffiles: CONFFILES }), files }));
    assert.equal(r.delta, 3);
    assert.equal(r.message, 'Debian 12.13; obsolete conffiles: 1; packages inconsistent: 2, upgradable: 2');
    assert.deepEqual(r.data, {
      debian_version: '12.13',
      inconsistent_packages: ['libvirt-daemon', 'zookeeper'],
      upgradable_packages: ['unzip', 'zip'],
      obsolete_conffiles: ['/etc/old.conf'],
    });
  });

  it('the upgradable list is reused for 10 minutes of the clock', async () => {
    const clock = new VirtualClock(1_000_000);
    const fake = exec({ upgradable: UPGRADABLE });
    const plugin = createDpkgPlugin();
    const ctx = fakePluginContext({ exec: fake, files, clock });
    await plugin.run(ctx);
    await clock.advance(UPGRADABLE_TTL_MS - 1);
    await plugin.run(ctx);
    assert.equal(fake.lines().filter((l) => l.startsWith('apt list')).length, 1);
    await clock.advance(1);
    await plugin.run(ctx);
    assert.equal(fake.lines().filter((l) => l.startsWith('apt list')).length, 2);
  });

  it('broken: a failing command throws its reason; garbage output lists nothing', async () => {
    const failing = exec().on('apt list', { exitCode: 100, stderr: 'E: Could not open lock file\n' });
    await assert.rejects(Promise.resolve(createDpkgPlugin().run(fakePluginContext({ exec: failing, files }))), /apt list --upgradable failed \(exit 100\): E: Could not open lock file/);
    await assert.rejects(Promise.resolve(createDpkgPlugin().run(fakePluginContext({ exec: exec({ auditCode: 2 }), files }))), /dpkg --audit failed/);
    assert.deepEqual(parseAudit('random\ntext'), []);
    assert.deepEqual(parseUpgradable('zip 3.0 amd64'), []);
    assert.deepEqual(parseObsoleteConffiles(' /etc/x nothex obsolete'), []);
    const r = await createDpkgPlugin().run(fakePluginContext({ exec: exec(), files: {} }));
    assert.match(r.message, /^Debian unknown;/);
  });

  it('setup: not loaded without dpkg', async () => {
    assert.match(String(await createDpkgPlugin().setup?.(fakePluginContext())), /dpkg not installed/);
    const ok = new FakeExec().on('dpkg --version', { stdout: 'Debian dpkg 1.21\n' });
    assert.equal(await createDpkgPlugin().setup?.(fakePluginContext({ exec: ok })), undefined);
  });
});
