/**
 * Adam's state kept outside the wasm heap (issue #31): the two moments of every variable as plain
 * `Float32Array`s in the process's own memory, updated in place by the native kernel
 * (`backend/native-adam.ts`), with the global-norm clip folded into the same pass. For a 135M-parameter
 * model that frees 1 GiB of the 4 GiB heap (the moments) plus 0.5 GiB (the clipped copy of the
 * gradients), which is what full fine-tuning at that size needs to fit.
 *
 * The arithmetic is tfjs' `AdamOptimizer.applyGradients` to the bit (the kernel's float32 operations
 * in tfjs' order; `accBeta` advanced by one float32 multiply per step, `1 - accBeta` rounded to
 * float32), so a run may move between this state and tfjs' (`fromTfjs` / `toTfjs`) at any step.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { nativeAdamHostStep } from '../backend/native-adam.js';
import { tf } from '../backend/tf.js';

/** tfjs `AdamOptimizer` internals this state is read from and written back to. */
export interface TfjsAdamInternals {
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  learningRate: number;
  accBeta1: tf.Variable;
  accBeta2: tf.Variable;
  accumulatedFirstMoment: ({ originalName: string; variable: tf.Variable } | undefined)[];
  accumulatedSecondMoment: ({ originalName: string; variable: tf.Variable } | undefined)[];
  iterations_: number | undefined;
}

/** One variable's moments. */
interface Moments {
  readonly m: Float32Array;
  readonly v: Float32Array;
}

/**
 * Adam state in host memory.
 * @example
 * const state = HostAdamState.fromTfjs(tfjsAdam);
 * state.step(variables, grads, clipScale, tfjsAdam); // w' in the heap, m and v updated in place
 */
export class HostAdamState {
  /** Per variable, in `apply` order; undefined until its first step. */
  moments: (Moments | undefined)[] = [];
  /** tfjs' `iterations_`. */
  iterations = 0;
  /** beta^(t+1) as tfjs keeps it (float32). */
  accBeta1: number;
  accBeta2: number;

  constructor(beta1: number, beta2: number) {
    this.accBeta1 = Math.fround(beta1);
    this.accBeta2 = Math.fround(beta2);
  }

  /** Bytes held (both moments of every variable). */
  get bytes(): number {
    return this.moments.reduce((n, m) => n + (m === undefined ? 0 : 8 * m.m.length), 0);
  }

  /**
   * One step of every variable on `grads[i] * scale`; false (nothing changed) when the native
   * kernel cannot run here, which the caller checks first.
   */
  step(variables: readonly tf.Variable[], grads: readonly tf.Tensor[], scale: number, adam: TfjsAdamInternals): boolean {
    const scalars = {
      beta1: adam.beta1,
      beta2: adam.beta2,
      epsilon: adam.epsilon,
      learningRate: adam.learningRate,
      oneMinusAccBeta1: Math.fround(1 - this.accBeta1),
      oneMinusAccBeta2: Math.fround(1 - this.accBeta2),
    };
    for (let i = 0; i < variables.length; i++) {
      const value = variables[i] as tf.Variable;
      const grad = grads[i] as tf.Tensor;
      if (grad.size !== value.size) throw InvalidArgumentError.format(`grads[${i}]`, `shape [${grad.shape}] does not match its variable's [${value.shape}]`);
      let moments = this.moments[i];
      if (moments === undefined) {
        moments = { m: new Float32Array(value.size), v: new Float32Array(value.size) };
        this.moments[i] = moments;
      }
      const next = nativeAdamHostStep(value, grad, moments, scale, scalars);
      if (next === null) return false;
      value.assign(next);
      next.dispose();
    }
    this.accBeta1 = Math.fround(this.accBeta1 * Math.fround(adam.beta1));
    this.accBeta2 = Math.fround(this.accBeta2 * Math.fround(adam.beta2));
    this.iterations++;
    return true;
  }

  /** Takes over tfjs' state (its moment variables are freed). */
  static fromTfjs(adam: TfjsAdamInternals): HostAdamState {
    const state = new HostAdamState(adam.beta1, adam.beta2);
    state.accBeta1 = (adam.accBeta1.dataSync() as Float32Array)[0] as number;
    state.accBeta2 = (adam.accBeta2.dataSync() as Float32Array)[0] as number;
    state.iterations = adam.iterations_ ?? 0; // tfjs sets it on the first step
    const first = adam.accumulatedFirstMoment;
    const second = adam.accumulatedSecondMoment;
    for (let i = 0; i < Math.max(first.length, second.length); i++) {
      const m = first[i]?.variable;
      const v = second[i]?.variable;
      state.moments[i] = m !== undefined && v !== undefined ? { m: (m.dataSync() as Float32Array).slice(), v: (v.dataSync() as Float32Array).slice() } : undefined;
    }
    tf.dispose([...first, ...second].flatMap((x) => (x === undefined ? [] : [x.variable])));
    adam.accumulatedFirstMoment = [];
    adam.accumulatedSecondMoment = [];
    return state;
  }

  /** Hands the state back to tfjs (moment variables of `variables`' shapes), e.g. when the native path is turned off. */
  toTfjs(adam: TfjsAdamInternals, variables: readonly tf.Variable[]): void {
    tf.tidy(() => {
      adam.accBeta1.assign(tf.scalar(this.accBeta1));
      adam.accBeta2.assign(tf.scalar(this.accBeta2));
    });
    adam.iterations_ = this.iterations;
    adam.accumulatedFirstMoment = [];
    adam.accumulatedSecondMoment = [];
    this.moments.forEach((moments, i) => {
      const variable = variables[i];
      if (moments === undefined || variable === undefined) return;
      const make = (data: Float32Array, kind: 'm' | 'v') => ({ originalName: `${variable.name}/${kind}`, variable: tf.tidy(() => tf.variable(tf.tensor(data, variable.shape, 'float32'), false)) });
      adam.accumulatedFirstMoment[i] = make(moments.m, 'm');
      adam.accumulatedSecondMoment[i] = make(moments.v, 'v');
    });
    this.moments = [];
  }
}
