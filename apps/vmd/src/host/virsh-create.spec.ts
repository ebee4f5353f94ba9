import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeExec, TimeoutError } from '@pvc/runtime';
import { VmdError } from '../errors.js';
import { libvirtMessage, virshCreate } from './virsh-create.js';

const URI = 'qemu:///system';

async function failure(exec: FakeExec, dir: string): Promise<VmdError> {
  try {
    await virshCreate('<domain/>', { exec, uri: URI, scratchDir: dir, timeoutMs: 1000 });
  } catch (err) {
    assert.ok(err instanceof VmdError);
    return err;
  }
  throw new Error('virshCreate resolved');
}

describe('virshCreate (virsh create through Exec)', () => {
  it('passes the XML as a 0600 file that is gone afterwards', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vmd-create-'));
    let seen: { text: string; mode: number } | undefined;
    const exec = new FakeExec().on(`virsh -c ${URI} create `, (call) => {
      const file = call.args[3] ?? '';
      seen = { text: readFileSync(file, 'utf8'), mode: statSync(file).mode & 0o777 };
      return { exitCode: 0, stdout: 'Domain \'vm1\' created\n', stderr: '' };
    });
    await virshCreate('<domain>vm1</domain>', { exec, uri: URI, scratchDir: dir, timeoutMs: 1000 });
    assert.deepEqual(seen, { text: '<domain>vm1</domain>', mode: 0o600 });
    assert.equal(existsSync(exec.calls[0]?.args[3] ?? ''), false);
    rmSync(dir, { recursive: true });
  });

  it('libvirt refusing: LIBVIRT_ERROR with libvirt\'s own message; unreachable or slow: retryable codes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vmd-create-'));
    const refused = new FakeExec().on('virsh', {
      exitCode: 1, stderr: 'error: Failed to create domain from /run/x.xml\nerror: internal error: process exited while connecting to monitor\n',
    });
    const e1 = await failure(refused, dir);
    assert.deepEqual([e1.code, e1.message], ['LIBVIRT_ERROR', 'internal error: process exited while connecting to monitor']);
    const down = new FakeExec().on('virsh', {
      exitCode: 1, stderr: 'error: failed to connect to the hypervisor\nerror: Failed to connect socket to \'/run/libvirt/libvirt-sock\': No such file or directory\n',
    });
    const e2 = await failure(down, dir);
    assert.deepEqual([e2.code, e2.retryable], ['LIBVIRT_UNAVAILABLE', true]);
    const slow = new FakeExec().on('virsh', () => Promise.reject(new TimeoutError('virsh create', 1000)));
    const e3 = await failure(slow, dir);
    assert.deepEqual([e3.code, e3.retryable], ['LIBVIRT_TIMEOUT', true]);
    rmSync(dir, { recursive: true });
  });

  it('libvirtMessage keeps every libvirt line and falls back to the exit code', () => {
    assert.equal(libvirtMessage('error: Failed to create domain from f\nerror: a\nerror: b\n'), 'a; b');
    assert.equal(libvirtMessage('', '', 3), 'virsh create exited 3');
  });
});
