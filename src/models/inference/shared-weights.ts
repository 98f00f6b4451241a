/**
 * Named weights in one `SharedArrayBuffer`, so that every inference worker reads the same bytes:
 * one copy per policy version on the main thread (the learner's tensors into the shared buffer),
 * none per worker or per request. A worker wraps the entries as views and loads them into its
 * model (the model copies them onto its own tensor backend).
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { NamedTensors } from '../checkpoint.js';

/** Where one tensor lies in the buffer. */
export interface SharedWeightEntry {
  readonly name: string;
  readonly shape: readonly number[];
  /** Offset and length in floats. */
  readonly offset: number;
  readonly length: number;
}

/** A set of named float tensors in one shared buffer (structured-clone safe: the buffer is shared, not copied). */
export interface SharedWeights {
  readonly buffer: SharedArrayBuffer;
  readonly entries: readonly SharedWeightEntry[];
}

/**
 * Copies `weights` into one new shared buffer, in map order.
 * @example const shared = shareWeights(model.namedWeights()); worker.postMessage({ kind: 'weights', version, weights: shared });
 */
export function shareWeights(weights: NamedTensors): SharedWeights {
  let total = 0;
  const entries: SharedWeightEntry[] = [];
  for (const [name, { shape, data }] of weights) {
    const length = shape.reduce((a, b) => a * b, 1);
    if (data.length !== length) throw InvalidArgumentError.format(`weights.${name}`, `shape [${shape.join(', ')}] holds ${length} values, the data ${data.length}`);
    entries.push({ name, shape: [...shape], offset: total, length });
    total += length;
  }
  const buffer = new SharedArrayBuffer(total * Float32Array.BYTES_PER_ELEMENT);
  const all = new Float32Array(buffer);
  for (const entry of entries) all.set((weights.get(entry.name) as { data: Float32Array }).data, entry.offset);
  return { buffer, entries };
}

/**
 * The tensors of `shared` as views of its buffer (no copy): what `loadNamedWeights` reads.
 * @example model.loadNamedWeights(sharedViews(message.weights));
 */
export function sharedViews(shared: SharedWeights): NamedTensors {
  const out: NamedTensors = new Map();
  for (const { name, shape, offset, length } of shared.entries) {
    out.set(name, { shape: [...shape], data: new Float32Array(shared.buffer, offset * Float32Array.BYTES_PER_ELEMENT, length) });
  }
  return out;
}
