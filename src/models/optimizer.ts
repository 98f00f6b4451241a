/**
 * Adam(W) on tfjs variables, with a settable learning rate (for schedules) and exact state
 * save/restore. Built on tfjs' own `AdamOptimizer` (well tested, and the update the slice already
 * trained with); decoupled weight decay (AdamW) is the one extra step tfjs lacks. On wasm with the
 * native addon each variable's update is one native kernel (`backend/native-adam.ts`) on the same
 * optimizer state, giving the same bits as tfjs' thirteen kernels.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { nativeAdamAvailable, nativeAdamStep } from './backend/native-adam.js';
import { tf } from './backend/tf.js';

/** One named array of optimizer (or other trainer) state. */
export interface NamedArray {
  readonly name: string;
  readonly shape: number[];
  readonly data: Float32Array;
}

/** Adam(W) hyper-parameters. */
export interface AdamWOptions {
  readonly lr: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly epsilon?: number;
  /** Decoupled weight decay λ (AdamW): `w ← w − lr·λ·w` before each Adam step; 0 = plain Adam. */
  readonly weightDecay?: number;
  /** Prefix of the state names, e.g. `adam` → `adam/iterations`, `adam/m/0`. */
  readonly prefix?: string;
}

/** A tensor with a name, as `Optimizer.getWeights`/`setWeights` exchange them (not re-exported by tfjs). */
type NamedTensor = Awaited<ReturnType<tf.AdamOptimizer['getWeights']>>[number];

/** The private Adam fields tfjs recomputes (with pow) on `setWeights`; saved so a resume is bit-exact. */
interface AdamInternals {
  accBeta1?: unknown;
  accBeta2?: unknown;
  /** Read by tfjs on every `applyGradients`; protected in its typings, so set through this view. */
  learningRate: number;
}

/** The rest of tfjs' Adam state the native update reads and writes exactly as `applyGradients` does. */
interface AdamState {
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  readonly learningRate: number;
  readonly accBeta1: tf.Variable;
  readonly accBeta2: tf.Variable;
  readonly accumulatedFirstMoment: ({ originalName: string; variable: tf.Variable } | undefined)[];
  readonly accumulatedSecondMoment: ({ originalName: string; variable: tf.Variable } | undefined)[];
  incrementIterations(): void;
}

/**
 * AdamW: Loshchilov & Hutter 2019, arXiv:1711.05101 (Adam: Kingma & Ba 2015, arXiv:1412.6980).
 * Shape: variables and gradients of equal shapes, in a fixed order.
 * @example
 * const opt = new AdamW({ lr: 1e-3, weightDecay: 0.01 });
 * opt.apply(model.trainableVariables(), grads); opt.setLearningRate(5e-4);
 */
export class AdamW {
  private readonly adam: tf.AdamOptimizer;
  private readonly weightDecay: number;
  private readonly prefix: string;

  constructor(options: AdamWOptions) {
    if (!(options.lr >= 0 && Number.isFinite(options.lr))) throw InvalidArgumentError.format('lr', `expected > 0, got ${options.lr}`);
    const weightDecay = options.weightDecay ?? 0;
    if (!(weightDecay >= 0)) throw InvalidArgumentError.format('weightDecay', `expected ≥ 0, got ${weightDecay}`);
    this.weightDecay = weightDecay;
    this.prefix = options.prefix ?? 'adam';
    this.adam = tf.train.adam(options.lr, options.beta1 ?? 0.9, options.beta2 ?? 0.99, options.epsilon ?? 1e-8);
  }

  /** The learning rate the next {@link apply} uses. */
  get learningRate(): number {
    return (this.adam as unknown as AdamInternals).learningRate;
  }

  /** Sets the learning rate of the next updates (schedules call this once per step). */
  setLearningRate(lr: number): void {
    if (!(lr >= 0 && Number.isFinite(lr))) throw InvalidArgumentError.format('lr', `expected a finite number ≥ 0, got ${lr}`);
    (this.adam as unknown as AdamInternals).learningRate = lr;
  }

  /** One update: decoupled weight decay, then Adam with `grads[i]` for `variables[i]`. */
  apply(variables: readonly tf.Variable[], grads: readonly tf.Tensor[]): void {
    if (grads.length !== variables.length) throw InvalidArgumentError.format('grads', `expected ${variables.length} gradients, got ${grads.length}`);
    if (this.weightDecay > 0) {
      const keep = 1 - this.learningRate * this.weightDecay;
      for (const v of variables) tf.tidy(() => v.assign(tf.mul(v, keep)));
    }
    if (!this.applyNative(variables, grads)) this.adam.applyGradients(variables.map((v, i) => ({ name: v.name, tensor: grads[i] })));
  }

  /**
   * tfjs' `applyGradients` with each variable's update as one native kernel: the same state (moment
   * variables created as tfjs creates them, `accBeta` advanced after the step, iterations counted),
   * so `getState`/`setState` and a later tfjs step see no difference. False when not on the native path.
   */
  private applyNative(variables: readonly tf.Variable[], grads: readonly tf.Tensor[]): boolean {
    if (!nativeAdamAvailable() || [...variables, ...grads].some((t) => t.dtype !== 'float32')) return false;
    const adam = this.adam as unknown as AdamState;
    const oneMinus = (v: tf.Variable) => Math.fround(1 - (v.dataSync() as Float32Array)[0]); // tfjs: sub(1, accBeta), float32
    const scalars = { beta1: adam.beta1, beta2: adam.beta2, epsilon: adam.epsilon, learningRate: adam.learningRate, oneMinusAccBeta1: oneMinus(adam.accBeta1), oneMinusAccBeta2: oneMinus(adam.accBeta2) };
    for (let i = 0; i < variables.length; i++) {
      const value = variables[i] as tf.Variable;
      const moment = (kind: 'm' | 'v') => ({ originalName: `${value.name}/${kind}`, variable: tf.tidy(() => tf.zerosLike(value).variable(false)) });
      const first = adam.accumulatedFirstMoment[i] ?? moment('m');
      const second = adam.accumulatedSecondMoment[i] ?? moment('v');
      adam.accumulatedFirstMoment[i] = first;
      adam.accumulatedSecondMoment[i] = second;
      const next = nativeAdamStep(value, first.variable, second.variable, grads[i] as tf.Tensor, scalars);
      if (next === null) throw InvalidArgumentError.format(`grads[${i}]`, `shape [${(grads[i] as tf.Tensor).shape}] does not match its variable's [${value.shape}]`);
      value.assign(next[0]);
      first.variable.assign(next[1]);
      second.variable.assign(next[2]);
      tf.dispose(next);
    }
    tf.tidy(() => {
      adam.accBeta1.assign(tf.mul(adam.accBeta1, adam.beta1));
      adam.accBeta2.assign(tf.mul(adam.accBeta2, adam.beta2));
    });
    adam.incrementIterations();
    return true;
  }

  /** `<prefix>/iterations`, `<prefix>/accBeta1`, `<prefix>/accBeta2`, then `<prefix>/m/<i>`, `<prefix>/v/<i>` per variable. */
  async getState(): Promise<NamedArray[]> {
    const p = this.prefix;
    const weights = await this.adam.getWeights();
    const [iterations, ...moments] = weights;
    const out: NamedArray[] = [{ name: `${p}/iterations`, shape: [], data: Float32Array.of((await iterations.tensor.data())[0]) }];
    iterations.tensor.dispose();
    const internals = this.adam as unknown as AdamInternals;
    for (const key of ['accBeta1', 'accBeta2'] as const) {
      const variable = internals[key];
      if (variable instanceof tf.Variable) out.push({ name: `${p}/${key}`, shape: [], data: ((await variable.data()) as Float32Array).slice() });
    }
    const half = moments.length / 2;
    for (let i = 0; i < moments.length; i++) {
      const { tensor } = moments[i];
      out.push({ name: `${p}/${i < half ? 'm' : 'v'}/${i % half}`, shape: [...tensor.shape], data: ((await tensor.data()) as Float32Array).slice() });
    }
    return out;
  }

  /** Restores what {@link getState} returned for these `variables`; the next update continues exactly. */
  async setState(byName: ReadonlyMap<string, NamedArray>, variables: readonly tf.Variable[]): Promise<void> {
    const p = this.prefix;
    const iterations = byName.get(`${p}/iterations`);
    if (iterations === undefined) throw InvalidArgumentError.format('state.optimizer', `missing '${p}/iterations'`);
    const moments: NamedTensor[] = [];
    for (const kind of ['m', 'v'] as const) {
      for (let i = 0; i < variables.length; i++) {
        const entry = byName.get(`${p}/${kind}/${i}`);
        if (entry === undefined) continue;
        if (entry.shape.join(',') !== variables[i].shape.join(',')) {
          throw InvalidArgumentError.format(`state.optimizer['${p}/${kind}/${i}']`, `shape [${entry.shape}] ≠ variable shape [${variables[i].shape}]`);
        }
        moments.push({ name: `${variables[i].name}/${kind}`, tensor: tf.tensor(entry.data, entry.shape, 'float32') });
      }
    }
    if (moments.length !== 0 && moments.length !== 2 * variables.length) {
      throw InvalidArgumentError.format('state.optimizer', `expected ${p} moments for all ${variables.length} variables or none, got ${moments.length / 2}`);
    }
    const previous = await this.adam.getWeights();
    const iter: NamedTensor = { name: 'iter', tensor: tf.scalar(iterations.data[0], 'int32') };
    await this.adam.setWeights([iter, ...moments]);
    tf.dispose([iter.tensor, ...moments.map((m) => m.tensor), ...previous.map((x) => x.tensor)]);
    const internals = this.adam as unknown as AdamInternals;
    for (const key of ['accBeta1', 'accBeta2'] as const) {
      const saved = byName.get(`${p}/${key}`);
      const variable = internals[key];
      if (saved !== undefined && variable instanceof tf.Variable) tf.tidy(() => variable.assign(tf.scalar(saved.data[0])));
    }
  }

  /** Frees the optimizer's state. */
  dispose(): void {
    this.adam.dispose();
  }
}
