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

/**
 * What a contract run needs: a port, an existing link that is up, a name that is not a link, and a
 * neighbour on the link whose ARP table can be read. The neighbour holds an entry for
 * `192.0.2.254` at some other MAC before the run (a gratuitous ARP updates entries, it does not
 * create them).
 */
export interface AddressRig {
  port: AddressPort;
  device: string;
  missing: string;
  /** The MAC of `device`. */
  deviceMac(): Promise<string>;
  /** The MAC the neighbour holds for `ip`, if any. */
  neighbourMac(ip: string): Promise<string | undefined>;
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

    it('announce of an address on the link moves the neighbour\'s ARP entry to the link\'s MAC', async () => {
      const mac = await rig.deviceMac();
      assert.notEqual(await rig.neighbourMac('192.0.2.254'), mac, 'the neighbour must start with another MAC');
      await rig.port.announce('192.0.2.254', rig.device);
      // The packets are sent when announce resolves; the neighbour's kernel takes them in its own time.
      const deadline = Date.now() + 2_000;
      while ((await rig.neighbourMac('192.0.2.254')) !== mac && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await rig.neighbourMac('192.0.2.254'), mac);
    });

    it('announce of an address that is not on the link rejects', async () => {
      await assert.rejects(rig.port.announce('192.0.2.77', rig.device), (err: unknown) => {
        assert.match(String((err as Error).message), /192\.0\.2\.77/);
        return true;
      });
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
