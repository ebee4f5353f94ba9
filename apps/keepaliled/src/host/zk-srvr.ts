import { tcpRequest } from '../health/host/tcp.js';
import type { LocalZkServer } from '../ports.js';
import { classifyProbeError, classifySrvr } from '../witness/srvr.js';

/**
 * The real {@link LocalZkServer}: `srvr` over TCP to `host:port` — the node's name and the client
 * port, where every client (ours and the other nodes') reaches this server. Bounded by `timeoutMs`.
 */
export function srvrProbe(target: { host: string; port: number }): LocalZkServer {
  return {
    async probe(opts) {
      try {
        return classifySrvr(await tcpRequest(target.host, target.port, 'srvr', opts));
      } catch (err) {
        return classifyProbeError(err);
      }
    },
  };
}
