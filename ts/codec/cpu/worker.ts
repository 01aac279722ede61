/**
 * The worker script of the CPU pool (bundled as dist/node/worker.js and dist/browser/worker.js by
 * build/build.mjs): the CPU runtime's worker body with the codec's procedures.
 */
import { serveWorker } from '../../cpu/worker.js';
import { PROCEDURES } from './procedures.js';

serveWorker(PROCEDURES);
