import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { unaryCall, type CallOptions } from './call.js';

export { HealthImplementation, type ServingStatus } from 'grpc-health-check';

/**
 * Standard grpc.health.v1 Check against a local service ('' = the whole server). The service
 * definition is grpc-health-check's own (the package that serves it), so client and server agree.
 */
export async function checkHealth(target: string, service = '', opts: CallOptions = {}): Promise<string> {
  const Health = grpc.makeGenericClientConstructor(healthService, 'grpc.health.v1.Health');
  const client = new Health(target, grpc.credentials.createInsecure());
  try {
    const res = await unaryCall<{ service: string }, { status: string }>(client, 'Check', { service }, opts);
    return res.status;
  } finally {
    client.close();
  }
}
