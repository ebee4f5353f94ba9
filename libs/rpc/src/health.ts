import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath } from 'grpc-health-check';
import { unaryCall, type CallOptions } from './call.js';

export { HealthImplementation, type ServingStatus } from 'grpc-health-check';

/** Standard grpc.health.v1 Check against a local service ('' = the whole server). */
export async function checkHealth(target: string, service = '', opts: CallOptions = {}): Promise<string> {
  const def = protoLoader.loadSync(protoPath, { keepCase: true, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
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
