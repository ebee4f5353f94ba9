/**
 * The behaviour every {@link HostBridges} has, run against the fake (unit tier,
 * `bridges.spec.ts`) and the real adapter in a network namespace (integration tier,
 * `tests/integration/vmd/bridges.test.ts`).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HostBridges } from '../bridges.js';

/** What a contract run needs: a port, a bridge that exists and a name that exists nowhere. */
export interface BridgesRig {
  port: HostBridges;
  present: string;
  missing: string;
  teardown(): Promise<void>;
}

export function bridgesContract(name: string, setup: () => Promise<BridgesRig>): void {
  describe(`HostBridges contract: ${name}`, () => {
    let rig: BridgesRig;
    before(async () => {
      rig = await setup();
    });
    after(async () => {
      await rig?.teardown();
    });

    it('an existing bridge exists', async () => {
      assert.equal(await rig.port.exists(rig.present), true);
    });

    it('a name that is no device does not exist (no error)', async () => {
      assert.equal(await rig.port.exists(rig.missing), false);
    });
  });
}
