/**
 * The `parle/service` entry of the package (dist/node/service.js): the HTTP service's exports
 * (ts/service/index.ts), loaded through {@link loadService} so that a missing fastify or
 * prom-client is named in a PATH_UNAVAILABLE error when this module is imported. Its types are
 * ts/service/index.ts's (package.json "exports").
 */
import { loadService } from './load.js';

const service = await loadService();

export const { createService, runServe, ServiceError, ServiceErrorCodes, RETRY_AFTER_SECONDS } = service;
