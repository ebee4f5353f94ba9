import { createRequire } from 'node:module';

/**
 * node-zookeeper-client parses each server frame inside its socket 'data' handler, and a frame it
 * cannot parse (seen: `Unknown code: 695271424` on a connection abandoned by a timed-out connect,
 * right after the server came back) throws there — an uncaught exception that kills the process
 * (the supervisor died this way in tests/integration/supervisor/modes.test.ts). This wraps the
 * handler once, process-wide: such a frame ends that connection instead (the socket is destroyed
 * with the error, and the library reconnects as after any socket error, keeping the session).
 */
interface ConnectionManagerLike {
  prototype: {
    onSocketData(this: { socket?: { destroy(error?: Error): void } }, buffer: Buffer): void;
    __pvcGuarded?: boolean;
  };
}

const require = createRequire(import.meta.url);
const CM = require('node-zookeeper-client/lib/ConnectionManager.js') as ConnectionManagerLike;

if (CM.prototype.__pvcGuarded !== true) {
  const original = CM.prototype.onSocketData;
  CM.prototype.onSocketData = function guardedOnSocketData(buffer) {
    try {
      original.call(this, buffer);
    } catch (err) {
      this.socket?.destroy(err instanceof Error ? err : new Error(String(err)));
    }
  };
  CM.prototype.__pvcGuarded = true;
}
