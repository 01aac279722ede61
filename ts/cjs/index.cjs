'use strict';
/**
 * require('parle-codec'): the package's CommonJS entry (package.json "exports" "require" condition).
 *
 * parle is an ES module that awaits at top level (it instantiates xxHash's WebAssembly as it
 * loads), and require() cannot load such a module, not even on the Node versions that require()
 * other ES modules (ERR_REQUIRE_ASYNC_MODULE). So this entry bridges through import(): the engine
 * is asynchronous anyway, and every value comes from the one ES module (one ParleError class).
 *
 *     const parle = require('parle-codec');
 *     const engine = await parle.createEngine({ workers: 2 });
 *     const { ContainerReader, ErrorCodes } = await parle.load();   // everything else
 */
/** @type {Promise<typeof import('./index.js')> | undefined} */
let loading;

/** The ES module's exports (loaded once). */
function load() {
  loading ??= import('./index.js');
  return loading;
}

/** The ES module's createEngine: `await require('parle-codec').createEngine(options)`. */
async function createEngine(options) {
  return (await load()).createEngine(options);
}

/**
 * True when `e` is a ParleError (optionally of the given code), without waiting for load():
 * checked by name and code, since `instanceof` needs the class from load().
 */
function isParleError(e, code) {
  return e instanceof Error && e.name === 'ParleError' && typeof e.code === 'string' && (code === undefined || e.code === code);
}

module.exports = { load, createEngine, isParleError };
