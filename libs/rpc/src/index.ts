export * from './errors.js';
export * from './sockets.js';
export * from './proto.js';
export * from './call.js';
export * from './status.js';
export * from './health.js';
export * from './server.js';
export * from './service-main.js';
