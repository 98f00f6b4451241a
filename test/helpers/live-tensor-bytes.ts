/**
 * Live tensor bytes of the wasm backend and their peak, tracked by wrapping its data map (tfjs
 * 4.22's `dataIdMap`; test-only): `tf.memory().numBytes` counts a shared buffer once per tensor
 * viewing it, and the heap's size includes the allocator's slack, so neither measures what a
 * memory estimate of live tensors predicts.
 */
import { tf } from '../../src/backend/tf.js';

/** What the tracker reads. */
export interface LiveBytes {
  /** Bytes of tensor data alive now. */
  readonly live: number;
  /** Largest `live` since the last {@link LiveBytesTracker.resetPeak}. */
  readonly peak: number;
}

/** A tracker of the wasm backend's tensor data. */
export interface LiveBytesTracker {
  read(): LiveBytes;
  resetPeak(): void;
}

/**
 * Starts tracking (the backend must be wasm and initialised); counts data written from now on.
 * @example const bytes = trackLiveTensorBytes(); … bytes.read().peak
 */
export function trackLiveTensorBytes(): LiveBytesTracker {
  const map = (tf.backend() as unknown as { dataIdMap: { set(k: object, v: unknown): void; delete(k: object): boolean; has(k: object): boolean; get(k: object): unknown } }).dataIdMap;
  const state = { live: 0, peak: 0 };
  const sizeOf = (v: unknown) => {
    const { shape, dtype } = v as { shape: number[]; dtype: string };
    return dtype === 'string' ? 0 : shape.reduce((a, b) => a * b, 1) * (dtype === 'bool' ? 1 : 4);
  };
  const set = map.set.bind(map);
  const del = map.delete.bind(map);
  map.set = (k, v) => {
    if (map.has(k)) state.live -= sizeOf(map.get(k));
    state.live += sizeOf(v);
    state.peak = Math.max(state.peak, state.live);
    set(k, v);
  };
  map.delete = (k) => {
    if (map.has(k)) state.live -= sizeOf(map.get(k));
    return del(k);
  };
  return {
    read: () => ({ ...state }),
    resetPeak: () => {
      state.peak = state.live;
    },
  };
}
