#!/usr/bin/env node
/**
 * Composition root of netd: the common start-up (config, logger, local gRPC socket with health and
 * status), then run until SIGTERM/SIGINT.
 */
import { PVC_VERSION } from '@pvc/runtime';
import { serviceMain } from '@pvc/rpc';

process.exit(await serviceMain({ service: 'netd', version: PVC_VERSION, argv: process.argv.slice(2), env: process.env }));
