import type * as grpc from '@grpc/grpc-js';
import { addRpcService, SUPERVISOR } from '@pvc/rpc';
import type { SupervisorStatus } from '../status.js';

/** Serves pvc.supervisor.v1.SupervisorService: the children and their states. */
export function registerSupervisorService(server: grpc.Server, status: SupervisorStatus): void {
  addRpcService(server, SUPERVISOR, {
    listServices: async () => ({ services: status.services() }),
  });
}
