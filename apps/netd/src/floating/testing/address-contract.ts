/**
 * The behaviour every {@link AddressPort} has, run against the fake (unit tier,
 * `fake-addresses.spec.ts`) and the real adapter in a network namespace (integration tier,
 * `tests/integration/netd/addresses.test.ts`).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it, after, before } from 'node:test';
import type { AddressPort } from '../address-port.js';

/** What a contract run needs: a port, an existing link that is up, and a name that is not a link. */
export interface AddressRig {
  port: AddressPort;
  device: string;
  missing: string;
  teardown(): Promise<void>;
}

const errCode = (err: unknown): unknown => (err instanceof Error && 'code' in err ? err.code : undefined);

export function addressContract(name: string, setup: () => Promise<AddressRig>): void {
  describe(`AddressPort contract: ${name}`, () => {
    let rig: AddressRig;
    before(async () => {
      rig = await setup();
    });
    after(async () => {
      await rig?.teardown();
    });

    it('add puts the address on the link; a second add is no error and no second copy', async () => {
      await rig.port.add('192.0.2.254/24', rig.device);
      await rig.port.add('192.0.2.254/24', rig.device);
      assert.deepEqual((await rig.port.list(rig.device)).filter((c) => c === '192.0.2.254/24'), ['192.0.2.254/24']);
    });

    it('announce of an address on the link resolves', async () => {
      await rig.port.announce('192.0.2.254', rig.device);
    });

    it('remove takes it off; removing it again, or from a link that does not exist, is no error', async () => {
      await rig.port.remove('192.0.2.254/24', rig.device);
      assert.ok(!(await rig.port.list(rig.device)).includes('192.0.2.254/24'));
      await rig.port.remove('192.0.2.254/24', rig.device);
      await rig.port.remove('192.0.2.254/24', rig.missing);
    });

    it('a link that does not exist: list and add fail with ADDRESS_NO_DEVICE naming it', async () => {
      for (const op of [() => rig.port.list(rig.missing), () => rig.port.add('192.0.2.253/24', rig.missing)]) {
        await assert.rejects(op(), (err: unknown) => {
          assert.equal(errCode(err), 'ADDRESS_NO_DEVICE');
          assert.match(String((err as Error).message), new RegExp(rig.missing));
          return true;
        });
      }
    });
  });
}
