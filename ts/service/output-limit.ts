/**
 * The bounds on what a decompress request may make the service write (issue: decompression
 * bombs). A .parle chunk of 64 MiB of constant elements is about 60 bytes, so a container of a
 * few hundred bytes can declare gigabytes, and its body says nothing of its work. Two bounds:
 *
 *   - the output the header declares (elements x element size) against `maxOutputBytes`, and,
 *     when the body's length is known, against `maxOutputRatio` x that length: refused from the
 *     header's 32 bytes, before any output;
 *   - mid-stream, the output so far against `maxOutputRatio` x the body bytes read so far, so a
 *     chunked body (no Content-Length) is bounded too.
 *
 * Both fail with ParleError LIMIT_EXCEEDED (413). The declared size is also what the admission
 * gate weighs the request by (ts/service/admission.ts).
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { HEADER_BYTES, readHeader } from '../format/layout.js';
import { elementSize } from '../types.js';
import { readHead, type BodyHead } from './body.js';

/** The output bounds of one decompress request. @internal */
export class OutputLimit {
  /** Output bytes the container's header declares; undefined until the header is read. */
  declaredBytes: number | undefined;

  /**
   * @param maxOutputBytes largest output, bytes
   * @param maxOutputRatio largest output bytes a body byte (0: no bound)
   * @param bodyBytes the body's Content-Length; undefined for a chunked body
   */
  constructor(
    private readonly maxOutputBytes: number,
    private readonly maxOutputRatio: number,
    private readonly bodyBytes: number | undefined,
  ) {}

  /**
   * Parses the container header at the start of `bytes` and checks its declared output.
   * @throws ParleError LIMIT_EXCEEDED (declared output over a bound); the header's own errors
   *   (NOT_PARLE, TRUNCATED, UNSUPPORTED_VERSION, CORRUPT), as the reader would throw them
   */
  checkHeader(bytes: Uint8Array): void {
    const header = readHeader(bytes);
    const declared = header.elementCount * elementSize(header.type);
    this.declaredBytes = declared;
    if (declared > this.maxOutputBytes) {
      throw new ParleError(
        ErrorCodes.LIMIT_EXCEEDED,
        `the container declares ${declared} bytes of output (${header.elementCount} ${header.type}), ` +
          `more than the limit (maxOutputBytes) of ${this.maxOutputBytes}`,
      );
    }
    if (this.bodyBytes !== undefined) this.checkOutput(declared, this.bodyBytes, 'declares');
  }

  /**
   * Checks `outputBytes` of output against the ratio bound for `inputBytes` of body.
   * @throws ParleError LIMIT_EXCEEDED
   */
  checkOutput(outputBytes: number, inputBytes: number, verb = 'would write'): void {
    if (this.maxOutputRatio > 0 && outputBytes > this.maxOutputRatio * inputBytes) {
      throw new ParleError(
        ErrorCodes.LIMIT_EXCEEDED,
        `the container ${verb} ${outputBytes} bytes of output for ${inputBytes} bytes of body, ` +
          `more than the ratio limit (maxOutputRatio) of ${this.maxOutputRatio}`,
      );
    }
  }

  /**
   * The body's pieces: `head`'s, then the rest of `body`. Without a head (the request was
   * admitted before its body was read), the header is gathered from `body` and checked first.
   * @throws as {@link checkHeader} and the body's reader
   */
  async *checkedBody(head: BodyHead | undefined, body: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
    if (head === undefined) {
      head = await readHead(body, HEADER_BYTES);
      this.checkHeader(head.bytes);
    }
    yield* head.pieces;
    yield* body;
  }
}
