import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { libvirtMemoryMiB } from './libvirt-memory.js';

describe('libvirtMemoryMiB', () => {
  it('converts every libvirt unit, KiB by default, case-insensitive', () => {
    assert.equal(libvirtMemoryMiB(262144, undefined), 256);
    assert.equal(libvirtMemoryMiB(262144, 'KiB'), 256);
    assert.equal(libvirtMemoryMiB(256, 'MiB'), 256);
    assert.equal(libvirtMemoryMiB(2, 'G'), 2048);
    assert.equal(libvirtMemoryMiB(1, 'tib'), 1024 ** 2);
    assert.equal(libvirtMemoryMiB(1024 ** 2, 'bytes'), 1);
    assert.equal(libvirtMemoryMiB(1000, 'MB'), 1e9 / 1024 ** 2);
  });

  it('an unknown unit is undefined, not a guess', () => {
    assert.equal(libvirtMemoryMiB(1, 'pages'), undefined);
  });
});
