import * as grpc from '@grpc/grpc-js';
import { protoPath } from 'grpc-health-check';
import { unaryCall, type CallOptions } from './call.js';
import { loadProto } from './proto.js';

export { HealthImplementation, type ServingStatus } from 'grpc-health-check';

/** Standard grpc.health.v1 Check against a local service ('' = the whole server). */
export async function checkHealth(target: string, service = '', opts: CallOptions = {}): Promise<string> {
  const pkg = loadProto(protoPath, { keepCase: true, enums: String, defaults: true }) as unknown as {
    grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
  };
  const client = new pkg.grpc.health.v1.Health(target, grpc.credentials.createInsecure());
  try {
    const res = await unaryCall<{ service: string }, { status: string }>(client, 'Check', { service }, opts);
    return res.status;
  } finally {
    client.close();
  }
}
