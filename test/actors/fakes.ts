/** Test helpers for actor tests: controllable promises and a scripted turn result. */
import type { ActResult } from '../../src/core/policy.js';

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** A promise the test settles by hand. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A promise that never settles (an effect that hangs). */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

/** A fake ActResult whose tokens encode `id`. */
export function fakeActResult(id: number, policyVersion = 0): ActResult {
  return {
    tokens: new Int32Array([id, id + 1, 2]),
    logprobs: new Float32Array([-0.5, -0.25, 0]),
    lossMask: new Uint8Array([1, 1, 0]),
    constraint: null,
    policyVersion,
  };
}

/** The events emitted by a list of executable actions from `transition()` (xstate's `emit`). */
export function emittedBy(actions: readonly { readonly type: string; readonly params?: unknown }[]): unknown[] {
  return actions.filter((a) => (a.type as string) === 'xstate.emit').map((a) => (a.params as { event: unknown }).event);
}
