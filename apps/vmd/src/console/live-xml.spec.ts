import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec } from '@pvc/runtime';
import { consoleLogPath, virshLiveXml, vncAddress } from './live-xml.js';

/** Trimmed from `virsh dumpxml` of a running guest with a VNC display (libvirt 9, autoport). */
const LIVE = `<domain type='qemu' id='7'>
  <name>web1</name>
  <devices>
    <serial type='pty'>
      <source path='/dev/pts/3'/>
      <log file='/var/log/libvirt/web1.log' append='on'/>
      <target type='isa-serial' port='0'><model name='isa-serial'/></target>
      <alias name='serial0'/>
    </serial>
    <console type='pty' tty='/dev/pts/3'>
      <source path='/dev/pts/3'/>
      <log file='/var/log/libvirt/web1.log' append='on'/>
      <target type='serial' port='0'/>
    </console>
    <graphics type='spice' port='5901' autoport='yes' listen='127.0.0.1'/>
    <graphics type='vnc' port='5900' autoport='yes' listen='0.0.0.0'>
      <listen type='address' address='0.0.0.0'/>
    </graphics>
  </devices>
</domain>`;

describe('live XML: console log path and vnc', () => {
  it('reads the serial <log file> and the vnc listen:port', () => {
    assert.equal(consoleLogPath(LIVE), '/var/log/libvirt/web1.log');
    assert.equal(vncAddress(LIVE), '0.0.0.0:5900');
  });

  it('a type=file serial gives its source path; no serial → undefined', () => {
    const xml = "<domain><devices><serial type='file'><source path='/tmp/a&amp;b.log'/><target port='0'/></serial></devices></domain>";
    assert.equal(consoleLogPath(xml), '/tmp/a&b.log');
    assert.equal(consoleLogPath("<domain><devices><serial type='pty'><target port='0'/></serial></devices></domain>"), undefined);
  });

  it('vnc: listen from a <listen> child, none, unassigned port -1, self-closing element', () => {
    assert.equal(vncAddress("<graphics type='vnc' port='5905' autoport='yes'><listen type='address' address='127.0.0.1'/></graphics>"), '127.0.0.1:5905');
    assert.equal(vncAddress("<domain><devices><serial type='pty'/></devices></domain>"), '');
    assert.equal(vncAddress("<graphics type='vnc' port='-1' autoport='yes'/>"), '');
    assert.equal(vncAddress("<graphics type='vnc' port='5902' listen='::1'/>"), '::1:5902');
  });

  it('virshLiveXml runs virsh dumpxml and names the failure', async () => {
    const exec = new FakeExec();
    exec.on('virsh -c qemu:///system dumpxml u1', { exitCode: 0, stdout: LIVE, stderr: '' });
    exec.on('virsh -c qemu:///system dumpxml u2', { exitCode: 1, stdout: '', stderr: 'error: failed to get domain u2' });
    const read = virshLiveXml(exec, 'qemu:///system');
    assert.equal(await read('u1'), LIVE);
    await assert.rejects(read('u2'), /virsh dumpxml u2: error: failed to get domain u2/);
  });
});
