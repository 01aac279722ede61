/**
 * The query parameters of the service's routes, checked strictly before any body byte is read:
 *
 *   route                  parameters (required first)
 *   POST /v1/compress      type (required): u8|u16|u32|i32|f32|i8|i16|f16|f64|i64|u64; codec: auto|stored|stages joined
 *                          by '+' (%2B in a URL); level: 1..9; decoder: cpu|gpu; shape: 720,1440
 *   POST /v1/decompress    none (the container says its type)
 *   POST /v1/sort          type (required): u32|i32|f32
 *   GET  /healthz          none
 *   GET  /metrics          none
 *
 * A missing or unknown `type` is 400 UNSUPPORTED_TYPE. Everything else is 400 INVALID_OPTION
 * naming the query parameter as the client wrote it, in the message and in the error body's
 * `parameter`: a parameter the route does not take (`?levle=9`: "did you mean 'level'?"), one
 * given more than once, a bad value (`?codec=bogus`, `?level=0`, `?decoder=GPU`). The library's
 * own messages (`options.codec: ...`) are never shown: the values are checked here, in the
 * query's terms.
 * Names are case-sensitive, as in the library.
 */
import { closestName, ErrorCodes, ParleError, type ErrorCode } from '../errors.js';
import { parseCodec } from '../format/stages.js';
import { MAX_LEVEL, MIN_LEVEL } from '../format/layout.js';
import type { ElementType } from '../types.js';
import { ELEMENT_TYPES, elementSize, isElementType, SORT_KEY_TYPES } from '../types.js';

/**
 * A 400 about one query parameter; `parameter` is its name as the client wrote it (decoded),
 * and so is ParleError's `option` when the code is INVALID_OPTION.
 */
export class QueryParameterError extends ParleError {
  constructor(
    code: ErrorCode,
    /** The query parameter's name, as the request wrote it (percent-decoded). */
    readonly parameter: string,
    message: string,
  ) {
    super(code, message, code === ErrorCodes.INVALID_OPTION ? { option: parameter } : undefined);
  }
}

/** Element types of POST /v1/compress. */
export const COMPRESS_TYPES: readonly ElementType[] = ELEMENT_TYPES;
/** Element types of POST /v1/sort: 32-bit keys on either path, 64-bit keys on the CPU path. */
export const SORT_TYPES: readonly ElementType[] = SORT_KEY_TYPES;

/** The query parameters each route takes; a route not listed takes none. */
export const ROUTE_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  'POST /v1/compress': ['type', 'codec', 'level', 'decoder', 'shape'],
  'POST /v1/decompress': [],
  'POST /v1/sort': ['type'],
  'GET /healthz': [],
  'GET /metrics': [],
};

/** Checked parameters of POST /v1/compress: what goes to `engine.createCompressor`. */
export interface CompressParameters {
  type: ElementType;
  /** The codec as written (`auto`, `stored`, `delta+huffman`, ...); undefined: the chooser. */
  codec?: string;
  /** Compression level, 1..9; undefined: the library's default (5). */
  level?: number;
  /**
   * The decoder the Huffman streams are laid out for, `cpu` (mode 2) or `gpu` (mode 3; see
   * CompressOptions.decoder); undefined: the library's default (`cpu`).
   */
  decoder?: 'cpu' | 'gpu';
  /** The array's shape (`?shape=720,1440`; see CompressOptions.shape); its product is checked against the body's elements by the library. */
  shape?: number[];
}

/**
 * The query of `url` (a request target such as `/v1/compress?type=u8`) as one value per name,
 * checked against the parameters `route` takes (see {@link ROUTE_PARAMETERS}).
 *   readQuery('/v1/compress?type=u8&level=9', 'POST /v1/compress')  ->  Map { type: 'u8', level: '9' }
 * @throws ParleError INVALID_OPTION (a {@link QueryParameterError}): a parameter the route does
 *   not take, or one given more than once
 */
export function readQuery(url: string, route: string): Map<string, string> {
  const known = ROUTE_PARAMETERS[route] ?? [];
  const at = url.indexOf('?');
  const query = new Map<string, string>();
  if (at < 0) return query;
  const seen = new Map<string, number>();
  for (const [name, value] of new URLSearchParams(url.slice(at + 1))) {
    if (!known.includes(name)) {
      const near = closestName(name, known);
      throw new QueryParameterError(
        ErrorCodes.INVALID_OPTION,
        name,
        `unknown query parameter '${name}'${near ? ` (did you mean '${near}'?)` : ''}; ${route} takes ` +
          (known.length > 0 ? known.join(', ') : 'no query parameters'),
      );
    }
    seen.set(name, (seen.get(name) ?? 0) + 1);
    query.set(name, value);
  }
  for (const [name, count] of seen) {
    if (count > 1) {
      throw new QueryParameterError(ErrorCodes.INVALID_OPTION, name, `query parameter ${name} is given ${count} times; give it once`);
    }
  }
  return query;
}

/**
 * The required `type` parameter, one of `allowed`.
 * @throws ParleError UNSUPPORTED_TYPE (missing, empty, or not one of `allowed`)
 */
function typeOf(query: Map<string, string>, allowed: readonly ElementType[], route: string): ElementType {
  const raw = query.get('type');
  if (raw === undefined) {
    throw new QueryParameterError(
      ErrorCodes.UNSUPPORTED_TYPE,
      'type',
      `${route} needs the query parameter type: one of ${allowed.join(', ')} (e.g. ?type=${allowed[0]})`,
    );
  }
  if (!isElementType(raw) || !allowed.includes(raw)) {
    throw new QueryParameterError(
      ErrorCodes.UNSUPPORTED_TYPE,
      'type',
      `query parameter type must be one of ${allowed.join(', ')}; got '${raw}'`,
    );
  }
  return raw;
}

/**
 * The `codec` parameter for elements of `type`, checked as the library would check it.
 * @throws ParleError INVALID_OPTION
 */
function codecOf(query: Map<string, string>, type: ElementType): string | undefined {
  const codec = query.get('codec');
  if (codec === undefined) return undefined;
  if (codec.split('+').includes('quantize')) {
    throw new QueryParameterError(
      ErrorCodes.INVALID_OPTION,
      'codec',
      "query parameter codec: 'quantize' is not a codec stage (the service has no lossy mode)",
    );
  }
  try {
    parseCodec(codec, Math.min(elementSize(type), 4));
  } catch (e) {
    if (!(e instanceof ParleError)) throw e;
    // "options.codec: unknown stage 'x' (...)" in the query's terms
    const message = /^options\.codec\b/.test(e.message)
      ? e.message.replace(/^options\.codec/, 'query parameter codec')
      : `query parameter codec: ${e.message}`;
    // A raw '+' in a query string is a space; the stages arrive as 'delta huffman'.
    const hint = codec.includes(' ') ? " (a '+' in a URL query is a space: write it as %2B)" : '';
    throw new QueryParameterError(ErrorCodes.INVALID_OPTION, 'codec', `${message}${hint}`);
  }
  return codec;
}

/**
 * The `level` parameter: a decimal integer from 1 to 9.
 * @throws ParleError INVALID_OPTION
 */
function levelOf(query: Map<string, string>): number | undefined {
  const raw = query.get('level');
  if (raw === undefined) return undefined;
  const level = Number(raw);
  if (!/^\d+$/.test(raw) || level < MIN_LEVEL || level > MAX_LEVEL) {
    throw new QueryParameterError(
      ErrorCodes.INVALID_OPTION,
      'level',
      `query parameter level must be an integer from ${MIN_LEVEL} to ${MAX_LEVEL}; got '${raw}'`,
    );
  }
  return level;
}

/**
 * The `shape` parameter: positive decimal integers joined by commas (`720,1440`).
 * @throws ParleError INVALID_OPTION
 */
function shapeOf(query: Map<string, string>): number[] | undefined {
  const raw = query.get('shape');
  if (raw === undefined) return undefined;
  const dims = raw.split(',').map((d) => (/^[1-9][0-9]*$/.test(d) ? Number(d) : NaN));
  if (dims.some((d) => !Number.isSafeInteger(d))) {
    throw new QueryParameterError(
      ErrorCodes.INVALID_OPTION,
      'shape',
      `query parameter shape must be positive integers joined by commas (720,1440); got '${raw}'`,
    );
  }
  return dims;
}

/** Values of the `decoder` parameter. */
const DECODERS = ['cpu', 'gpu'] as const;

/**
 * The `decoder` parameter: `cpu` or `gpu` (case-sensitive, as in the library).
 * @throws ParleError INVALID_OPTION
 */
function decoderOf(query: Map<string, string>): 'cpu' | 'gpu' | undefined {
  const raw = query.get('decoder');
  if (raw === undefined) return undefined;
  if (!(DECODERS as readonly string[]).includes(raw)) {
    throw new QueryParameterError(
      ErrorCodes.INVALID_OPTION,
      'decoder',
      `query parameter decoder must be one of ${DECODERS.join(', ')}; got '${raw}'`,
    );
  }
  return raw as 'cpu' | 'gpu';
}

/**
 * The checked parameters of POST /v1/compress, from the request target `url`.
 *   compressParameters('/v1/compress?type=u16&codec=delta%2Bhuffman')  ->  { type: 'u16', codec: 'delta+huffman' }
 * @throws ParleError UNSUPPORTED_TYPE (type missing or unknown), INVALID_OPTION (anything else;
 *   names the parameter)
 */
export function compressParameters(url: string): CompressParameters {
  const route = 'POST /v1/compress';
  const query = readQuery(url, route);
  const type = typeOf(query, COMPRESS_TYPES, route);
  const codec = codecOf(query, type);
  const level = levelOf(query);
  const decoder = decoderOf(query);
  const shape = shapeOf(query);
  return {
    ...(shape !== undefined ? { shape } : {}),
    type,
    ...(codec !== undefined ? { codec } : {}),
    ...(level !== undefined ? { level } : {}),
    ...(decoder !== undefined ? { decoder } : {}),
  };
}

/**
 * The checked parameters of POST /v1/sort, from the request target `url`.
 * @throws ParleError UNSUPPORTED_TYPE (type missing, or not u32, i32 or f32), INVALID_OPTION
 *   (another parameter, or type given twice)
 */
export function sortParameters(url: string): { type: ElementType } {
  const route = 'POST /v1/sort';
  return { type: typeOf(readQuery(url, route), SORT_TYPES, route) };
}
