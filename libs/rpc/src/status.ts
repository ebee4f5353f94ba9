import type * as grpc from '@grpc/grpc-js';
import type { CallOptions } from './call.js';
import { RpcError } from './errors.js';
import { StatusServiceService, type GetStatusResponse } from './generated/pvc/common/v1/status.js';
import { rpcClient } from './services.js';

/** Life-cycle states every service reports. */
export type ServiceState = 'starting' | 'running' | 'stopping';

const STATES: readonly string[] = ['starting', 'running', 'stopping'] satisfies ServiceState[];

/** The answer of StatusService.GetStatus (the generated message, with the state narrowed). */
export type ServiceStatus = Omit<GetStatusResponse, 'state'> & { state: ServiceState };

/** Adds StatusService to `server`, answering from `current()`. */
export function addStatusService(server: grpc.Server, current: () => ServiceStatus): void {
  server.addService(StatusServiceService, {
    getStatus: (_call: grpc.ServerUnaryCall<unknown, GetStatusResponse>, cb: grpc.sendUnaryData<GetStatusResponse>) => {
      cb(null, current());
    },
  });
}

/** Asks a local service for its status. Rejects when it reports a state outside {@link ServiceState}. */
export async function getStatus(target: string, opts: CallOptions = {}): Promise<ServiceStatus> {
  const client = rpcClient(target, StatusServiceService);
  try {
    const res = await client.getStatus({}, opts);
    if (!STATES.includes(res.state)) throw new RpcError(`getStatus: unknown service state "${res.state}"`, { method: 'getStatus' });
    return { ...res, state: res.state as ServiceState };
  } finally {
    client.close();
  }
}
