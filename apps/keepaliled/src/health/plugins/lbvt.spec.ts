import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExecError, FakeExec, TimeoutError } from '@pvc/runtime';
import { mutate } from '@pvc/config/testing';
import { validateConfig } from '@pvc/config';
import { fakePluginContext } from '../fake-context.js';
import plugin, { runningHypervisor, virshError } from './lbvt.js';

const VERSION_OK = [
  'Compiled against library: libvirt 9.0.0',
  'Using library: libvirt 9.0.0',
  'Using API: QEMU 9.0.0',
  'Running hypervisor: QEMU 7.2.0',
  '',
].join('\n');

describe('lbvt (libvirt) plugin', () => {
  it('is named as the original\'s plugin (part of fault IDs and monitoring_plugins)', () => {
    assert.equal(plugin.name, 'lbvt');
  });

  it('healthy: virsh version against the configured URI', async () => {
    const exec = new FakeExec().on('virsh -c qemu+tcp://pvchv1/system version', { stdout: VERSION_OK });
    const r = await plugin.run(fakePluginContext({ exec }));
    assert.equal(r.delta, 0);
    assert.equal(r.message, 'libvirt at qemu+tcp://pvchv1/system answers (QEMU 7.2.0)');
  });

  it('unhealthy: connection refused takes 50 with virsh\'s reason', async () => {
    const exec = new FakeExec().on('virsh -c', {
      exitCode: 1,
      stderr: "error: failed to connect to the hypervisor\nerror: unable to connect to server at 'pvchv1:16509': Connection refused\n",
    });
    const r = await plugin.run(fakePluginContext({ exec }));
    assert.equal(r.delta, 50);
    assert.match(r.message, /unable to connect to server at 'pvchv1:16509': Connection refused$/);
  });

  it('broken: output without the hypervisor line, a timeout, a missing virsh', async () => {
    let r = await plugin.run(fakePluginContext({ exec: new FakeExec().on('virsh', { stdout: 'hello' }) }));
    assert.equal(r.delta, 50);
    assert.match(r.message, /no "Running hypervisor" line/);
    const hang = new FakeExec().on('virsh', () => Promise.reject(new TimeoutError('virsh -c x version', 5000)));
    r = await plugin.run(fakePluginContext({ exec: hang }));
    assert.equal(r.delta, 50);
    assert.match(r.message, /timed out after 5000 ms/);
    const missing = new FakeExec().on('virsh', () => Promise.reject(new ExecError('virsh: could not run')));
    assert.match(String(await plugin.setup?.(fakePluginContext({ exec: missing }))), /virsh not installed/);
  });

  it('setup: loads only on hypervisors with virsh', async () => {
    const exec = new FakeExec().on('virsh --version', { stdout: '9.0.0\n' });
    assert.equal(await plugin.setup?.(fakePluginContext({ exec })), undefined);
    const config = validateConfig(mutate(['pvc.functions.enable_hypervisor', false]));
    assert.equal(await plugin.setup?.(fakePluginContext({ exec, config })), 'functions.enable_hypervisor is off');
  });

  it('parses virsh texts', () => {
    assert.equal(runningHypervisor(VERSION_OK), 'QEMU 7.2.0');
    assert.equal(runningHypervisor('nothing'), undefined);
    assert.equal(virshError(''), 'no error text');
  });
});
