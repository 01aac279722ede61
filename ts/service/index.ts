/**
 * parle's HTTP service (`parle serve`): compress, decompress and sort over HTTP, streaming,
 * with one engine and its worker pool shared by all requests of a process, and as many
 * processes as the cores call for (ts/service/cluster.ts). Start at ts/service/server.ts.
 *
 * Imported as `parle-codec/service`; needs the optional packages fastify and prom-client.
 *
 * @module parle/service
 */
export { createService } from './server.js';
export type { Service, ServiceOptions } from './server.js';
export { runServe } from './serve.js';
export type { ServeOptions } from './serve.js';
export type { ServiceMetrics } from './metrics.js';
export { ServiceError, ServiceErrorCodes, RETRY_AFTER_SECONDS } from './errors.js';
export type { ErrorBody, ServiceErrorCode } from './errors.js';
