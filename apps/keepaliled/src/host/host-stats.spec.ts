import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLoadavg, parseMeminfo } from './host-stats.js';

/** A /proc/meminfo of a 64 GiB hypervisor (Linux 6.1), trimmed after the keys that matter. */
const MEMINFO = `MemTotal:       65842312 kB
MemFree:        20000000 kB
MemAvailable:   50000000 kB
Buffers:         1000000 kB
Cached:         25000000 kB
SwapCached:         1234 kB
Active:         30000000 kB
Inactive:       10000000 kB
SwapTotal:       8388604 kB
SwapFree:        8388604 kB
Shmem:            500000 kB
KReclaimable:    2100000 kB
Slab:            3000000 kB
SReclaimable:    2000000 kB
SUnreclaim:      1000000 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
`;

test('parseMeminfo: psutil total / used (total-free-buffers-cached-SReclaimable) / available, MiB', () => {
  // used = 65842312 - 20000000 - 1000000 - 25000000 - 2000000 = 17842312 kB
  assert.deepEqual(parseMeminfo(MEMINFO), { totalMiB: 64299, usedMiB: 17424, freeMiB: 48828 });
});

test('parseMeminfo: SwapCached is not taken for Cached, whatever the line order', () => {
  const swapFirst = MEMINFO.replace('SwapCached:         1234 kB\n', '').replace('Buffers:', 'SwapCached:      9999999 kB\nBuffers:');
  assert.deepEqual(parseMeminfo(swapFirst), parseMeminfo(MEMINFO));
});

test('parseMeminfo: no MemAvailable (kernels before 3.14) → free memory is MemFree', () => {
  const old = MEMINFO.replace(/^MemAvailable:.*\n/m, '');
  assert.equal(parseMeminfo(old).freeMiB, Math.round(20000000 / 1024));
});

test('parseMeminfo: without Buffers/Cached/SReclaimable used is total - free; a negative result falls back too', () => {
  const bare = 'MemTotal: 2048000 kB\nMemFree: 1024000 kB\n';
  assert.deepEqual(parseMeminfo(bare), { totalMiB: 2000, usedMiB: 1000, freeMiB: 1000 });
  const cachedTooBig = 'MemTotal: 2048000 kB\nMemFree: 1024000 kB\nCached: 4096000 kB\n';
  assert.equal(parseMeminfo(cachedTooBig).usedMiB, 1000);
});

test('parseMeminfo: malformed input throws an error naming the missing key', () => {
  assert.throws(() => parseMeminfo(''), /\/proc\/meminfo has no MemTotal/);
  assert.throws(() => parseMeminfo('MemTotal: lots kB\nMemFree: 1 kB\n'), /no MemTotal/);
  assert.throws(() => parseMeminfo('MemTotal: 1024 kB\n'), /no MemFree/);
  assert.throws(() => parseMeminfo('MemTotal: 1024 kB\nMemFree: 512 kB\nMemAvailable: ??? kB\n'), /no MemAvailable/);
});

test('parseLoadavg: the 1-minute figure of a real /proc/loadavg line', () => {
  assert.equal(parseLoadavg('3.88 1.93 1.48 2/147 21242\n'), 3.88);
  assert.equal(parseLoadavg('0.00 0.01 0.05 1/300 1\n'), 0);
  assert.equal(parseLoadavg('  12.50 10.00 8.00 5/900 4242'), 12.5);
});

test('parseLoadavg: garbage throws naming the input', () => {
  assert.throws(() => parseLoadavg('abc def'), /unexpected \/proc\/loadavg: abc def/);
  assert.throws(() => parseLoadavg('NaN 1 1 1/1 1'), /unexpected \/proc\/loadavg/);
});

test('parseLoadavg: an empty or blank file is an error, not a load of 0', () => {
  assert.throws(() => parseLoadavg(''), /unexpected \/proc\/loadavg/);
  assert.throws(() => parseLoadavg('   \n'), /unexpected \/proc\/loadavg/);
});
