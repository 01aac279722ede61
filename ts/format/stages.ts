/**
 * The stages of the version-2 codec and the pipelines they form (docs/format.md, "Version 2").
 * The container stores stage ids; this module names them, checks pipelines and says which
 * streams a pipeline produces. Kernels live elsewhere (assembly/, shaders/codec-*.wgsl):
 * the container knows ids, not kernels.
 */
import { ErrorCodes, ParleError } from '../errors.js';

/** Stage ids as stored in a chunk table entry. */
export const enum StageId {
  Delta = 1,
  Shuffle = 2,
  Rle = 3,
  Huffman = 4,
  /**
   * The error-bounded quantizer of f32 and f64 (ts/codec/quantize.ts). Not part of a pipeline's four
   * slots: an entry records it in its byte 24, and the pipeline then codes the quantizer's codes.
   */
  Quantize = 5,
  /**
   * Frame of reference with patched exceptions in blocks of 256 elements (docs/format.md, "Pack
   * streams"): the alternative to huffman that decodes faster. Version 3 only.
   */
  Pack = 6,
  /**
   * Predict (version 4; ts/format/predict.ts): a value map and a predictor along the array's axes,
   * fields as planes. Not a pipeline slot: an entry records it in byte 24, and each field's
   * residuals then have a pipeline of their own in the payload.
   */
  Predict = 7,
}

/** Stage names, as `compress({ codec })`, `parle compress --codec` and `parle inspect` write them. */
export const STAGE_NAMES: Record<StageId, string> = {
  [StageId.Delta]: 'delta',
  [StageId.Shuffle]: 'shuffle',
  [StageId.Rle]: 'rle',
  [StageId.Huffman]: 'huffman',
  [StageId.Quantize]: 'quantize',
  [StageId.Pack]: 'pack',
  [StageId.Predict]: 'predict',
};

/** A pipeline: stage ids in the order the encoder applies them; empty = stored. */
export type Pipeline = readonly StageId[];

/** The order stages must appear in (huffman and pack: at most one of them, last). */
const ORDER: readonly StageId[] = [StageId.Delta, StageId.Shuffle, StageId.Rle, StageId.Huffman, StageId.Pack];

/** Most stages a pipeline holds (one of each of delta, shuffle, rle and an entropy stage). */
export const MAX_STAGES = 4;

/** `delta+shuffle+rle+huffman`, or `stored` for the empty pipeline; `quantize+...` for a quantized chunk. */
export function pipelineName(pipeline: Pipeline, quantize = false): string {
  const name = pipeline.length === 0 ? 'stored' : pipeline.map((s) => STAGE_NAMES[s]).join('+');
  return quantize ? `quantize+${name}` : name;
}

/**
 * Why `pipeline` is not valid for elements of `width` bytes, or undefined when it is: stages
 * must be a subsequence of delta, shuffle, rle, then huffman or pack (each at most once, in that
 * order; not both huffman and pack), and shuffle needs 2- or 4-byte elements.
 */
export function pipelineProblem(pipeline: readonly number[], width: number): string | undefined {
  let last = -1;
  for (const id of pipeline) {
    const at = ORDER.indexOf(id as StageId);
    if (at < 0) return `unknown stage id ${id}`;
    if (at <= last) return `stage ${STAGE_NAMES[id as StageId]} out of order or repeated`;
    if (id === StageId.Shuffle && width === 1) return 'shuffle on 1-byte elements';
    if (id === StageId.Pack && last === ORDER.indexOf(StageId.Huffman)) return 'huffman and pack in one pipeline';
    last = at;
  }
  return undefined;
}

/** The pipeline's entropy stage: huffman, pack, or undefined (streams stored raw). */
export function entropyStage(pipeline: readonly number[]): StageId.Huffman | StageId.Pack | undefined {
  const last = pipeline[pipeline.length - 1];
  return last === StageId.Huffman || last === StageId.Pack ? last : undefined;
}

/** Streams a pipeline produces for elements of `width` bytes: (shuffle ? width : 1) x (rle ? 2 : 1); 0 when stored. */
export function streamCount(pipeline: Pipeline, width: number): number {
  if (pipeline.length === 0) return 0;
  return (pipeline.includes(StageId.Shuffle) ? width : 1) * (pipeline.includes(StageId.Rle) ? 2 : 1);
}

/**
 * Parses a `--codec` / `{ codec }` value: `auto` (undefined is returned: let the chooser pick),
 * `stored`, or stage names joined by `+` (`delta+shuffle+huffman`).
 * @throws ParleError INVALID_OPTION naming the problem
 */
export function parseCodec(codec: string, width: number): Pipeline | undefined {
  if (codec === 'auto') return undefined;
  if (codec === 'stored') return [];
  const ids = codec.split('+').map((name) => {
    const entry = Object.entries(STAGE_NAMES).find(([, n]) => n === name);
    if (name === 'quantize') {
      throw new ParleError(
        ErrorCodes.INVALID_OPTION,
        "options.codec: 'quantize' is not a codec stage; ask for it with options.errorBound (f32, f64)",
      );
    }
    if (!entry) {
      throw new ParleError(
        ErrorCodes.INVALID_OPTION,
        `options.codec: unknown stage '${name}' (stages: delta, shuffle, rle, huffman, pack; or 'auto', 'stored')`,
      );
    }
    return Number(entry[0]) as StageId;
  });
  const problem = pipelineProblem(ids, width);
  if (problem) throw new ParleError(ErrorCodes.INVALID_OPTION, `options.codec '${codec}': ${problem}`);
  return ids;
}
