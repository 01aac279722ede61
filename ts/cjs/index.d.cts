// Types of require('parle') (dist/node/index.cjs): see ts/cjs/index.cjs.
import type * as Parle from './index.js' with { 'resolution-mode': 'import' };

/** The ES module's exports, loaded once through import(). */
export declare function load(): Promise<typeof Parle>;
/** The ES module's createEngine. */
export declare function createEngine(options?: Parle.EngineOptions): Promise<Parle.Engine>;
/** True when `e` is a ParleError (by name and code), optionally of the given code. */
export declare function isParleError(e: unknown, code?: Parle.ErrorCode): e is Parle.ParleError;
