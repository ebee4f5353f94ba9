import { after, afterEach, before, beforeEach, describe } from 'node:test';
import { ContractContext, type ZkContractHarness } from './contract-harness.js';
import { registerBasics } from './contract-basic.js';
import { registerLocks } from './contract-locks.js';
import { registerSessions } from './contract-session.js';
import { registerWatches } from './contract-watch.js';
import { registerWrites } from './contract-write.js';

/**
 * Registers the ZkClient contract suite: one set of tests, written against the interface only,
 * that every implementation must pass — the fake (unit tier) and the real client against a real
 * server (integration tier). Each test runs under its own fresh root path.
 */
export function registerZkContract(name: string, makeHarness: () => Promise<ZkContractHarness>): void {
  const ctx = new ContractContext(makeHarness);
  describe(`ZkClient contract: ${name}`, () => {
    before(() => ctx.start());
    after(() => ctx.stop());
    beforeEach(() => ctx.beforeEach());
    afterEach(() => ctx.afterEach());
    describe('nodes', () => registerBasics(ctx));
    describe('writes and objects', () => registerWrites(ctx));
    describe('watches', () => registerWatches(ctx));
    describe('sessions', () => registerSessions(ctx));
    describe('locks', () => registerLocks(ctx));
  });
}
