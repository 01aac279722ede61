/**
 * Parsers of the service's command-line flags, apart from the service itself: the CLI builds
 * `parle serve`'s options from them without loading fastify and prom-client, which it loads
 * only when the command runs (ts/service/load.ts).
 */
import { InvalidArgumentError } from 'commander';

/** Commander parser of an integer flag from `min` to `max` (a usage error, exit 2, otherwise). */
export function integerFlag(name: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    }
    return n;
  };
}
