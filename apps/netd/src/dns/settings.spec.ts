import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { dump } from 'js-yaml';
import { aggregatorSettings, pdnsArgs, pdnsConfigFile } from './settings.js';

const configOf = (...edits: [string, unknown][]) => parseConfig(dump(mutate(...edits)), 'test.yaml');

test('settings from the sample config: coordinator.dns.database, the cluster then upstream floating address, port 53', () => {
  assert.deepEqual(aggregatorSettings(configOf()), {
    database: { host: 'localhost', port: 5432, name: 'pvcdns', user: 'pvcdns', pass: 'pvcdnsPassw0rd' },
    listenAddresses: ['10.255.0.254', '1.1.1.10'],
    port: 53,
    socketDir: '/run/pvc/pdns',
    logFile: '/var/log/pvc/pdns-aggregator.log',
    upstreamDomain: 'mydomain.net',
  });
});

test('no aggregator without networking or on a hypervisor-only node', () => {
  assert.equal(aggregatorSettings(configOf(['pvc.functions.enable_networking', false])), undefined);
  assert.equal(aggregatorSettings(configOf(['pvc.node', 'pvchv9'])), undefined);
});

test('pdns_server arguments: the original\'s, without the password (see the module comment)', () => {
  const s = aggregatorSettings(configOf());
  assert.ok(s);
  const args = pdnsArgs(s);
  assert.deepEqual(args, [
    '--config-dir=/run/pvc/pdns',
    '--daemon=no',
    '--guardian=no',
    '--setuid=pdns',
    '--setgid=pdns',
    '--disable-syslog=yes',
    '--disable-axfr=no',
    '--allow-axfr-ips=0.0.0.0/0',
    '--local-address=10.255.0.254,1.1.1.10',
    '--local-port=53',
    '--log-dns-details=on',
    '--loglevel=3',
    '--master=yes',
    '--slave=yes',
    '--slave-renotify=yes',
    '--version-string=powerdns',
    '--zone-cache-refresh-interval=0',
    '--socket-dir=/run/pvc/pdns',
    '--launch=gpgsql',
    '--gpgsql-host=localhost',
    '--gpgsql-port=5432',
    '--gpgsql-dbname=pvcdns',
    '--gpgsql-user=pvcdns',
    '--gpgsql-dnssec=no',
  ]);
  assert.ok(!args.join(' ').includes('pvcdnsPassw0rd'));
  assert.equal(pdnsConfigFile(s.database), 'gpgsql-password=pvcdnsPassw0rd\n');
});
