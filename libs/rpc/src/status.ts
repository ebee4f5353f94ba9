import * as grpc from '@grpc/grpc-js';
import { loadProto, serviceClient } from './proto.js';
import { unaryCall, type CallOptions } from './call.js';

/** Life-cycle states every service reports. */
export type ServiceState = 'starting' | 'running' | 'stopping';

/** The answer of StatusService.GetStatus. */
export interface ServiceStatus {
  service: string;
  node: string;
  version: string;
  state: ServiceState;
  uptimeSeconds: number;
  pid: number;
}

const STATUS_SERVICE = 'pvc.common.v1.StatusService';

/** Constructor of the StatusService client/definition (loaded once per caller). */
export function statusServiceClient(): grpc.ServiceClientConstructor {
  return serviceClient(loadProto('pvc/common/v1/status.proto'), STATUS_SERVICE);
}

/** Adds StatusService to `server`, answering from `current()`. */
export function addStatusService(server: grpc.Server, current: () => ServiceStatus): void {
  const ctor = statusServiceClient();
  server.addService(ctor.service, {
    getStatus: (_call: grpc.ServerUnaryCall<unknown, ServiceStatus>, cb: grpc.sendUnaryData<ServiceStatus>) => {
      cb(null, current());
    },
  });
}

/** Asks a local service for its status. */
export async function getStatus(target: string, opts: CallOptions = {}): Promise<ServiceStatus> {
  const Ctor = statusServiceClient();
  const client = new Ctor(target, grpc.credentials.createInsecure());
  try {
    return await unaryCall<object, ServiceStatus>(client, 'getStatus', {}, opts);
  } finally {
    client.close();
  }
}
