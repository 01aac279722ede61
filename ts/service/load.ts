/**
 * Loads the HTTP service (ts/service/index.ts) on demand. Its dependencies, fastify and
 * prom-client (about 4 MB installed), are optional peer dependencies of the package: a library
 * user never installs them, and `parle serve` or `import 'parle-codec/service'` without them fails with
 * PATH_UNAVAILABLE naming the command that installs them, not with a bare module-not-found.
 */
import { ErrorCodes, ParleError } from '../errors.js';

/** The packages the service needs beyond the library's own dependencies. */
export const SERVICE_PACKAGES = ['fastify', 'prom-client'] as const;

/**
 * The service module.
 * @throws ParleError PATH_UNAVAILABLE when fastify or prom-client is not installed
 */
export async function loadService(): Promise<typeof import('./index.js')> {
  try {
    return await import('./index.js');
  } catch (e) {
    const message = String((e as Error)?.message ?? e);
    const missing = SERVICE_PACKAGES.filter((name) => message.includes(`'${name}'`));
    if ((e as { code?: string })?.code === 'ERR_MODULE_NOT_FOUND' && missing.length > 0) {
      throw new ParleError(
        ErrorCodes.PATH_UNAVAILABLE,
        `the HTTP service needs the optional packages ${SERVICE_PACKAGES.join(' and ')} (${missing.join(', ')} not found): ` +
          `\`npm install ${SERVICE_PACKAGES.join(' ')}\``,
        { cause: e },
      );
    }
    throw e;
  }
}
