/**
 * Adam(W) on tfjs variables, with a settable learning rate (for schedules) and exact state
 * save/restore. Built on tfjs' own `AdamOptimizer` (well tested, and the update the slice already
 * trained with); decoupled weight decay (AdamW) is the one extra step tfjs lacks. On wasm with the
 * native addon each variable's update is one native kernel (`backend/native-adam.ts`) giving the
 * same bits as tfjs' thirteen kernels, and the two moments live outside the wasm heap
 * (`host-adam.ts`: for a 135M model, 1 GiB the heap does not hold). The global-norm clip can be
 * passed as a scale ({@link AdamW.apply}), folded into the update, so no clipped copy of the
 * gradients is made.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { nativeAdamAvailable } from '../backend/native-adam.js';
import { tf } from '../backend/tf.js';
import { HostAdamState, type TfjsAdamInternals } from './host-adam.js';

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
  /** The state while the native path runs (moments outside the wasm heap); null: tfjs' optimizer holds it. */
  private host: HostAdamState | null = null;
  /** Variable shapes of the last `apply`/`setState` (the native state keeps flat arrays). */
  private shapes: number[][] = [];

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

  /**
   * One update: decoupled weight decay, then Adam with `grads[i] * scale` for `variables[i]`
   * (`scale`: the global-norm clip's factor, default 1; the same bits as clipped copies would give).
   */
  apply(variables: readonly tf.Variable[], grads: readonly tf.Tensor[], scale = 1): void {
    if (grads.length !== variables.length) throw InvalidArgumentError.format('grads', `expected ${variables.length} gradients, got ${grads.length}`);
    if (!(scale >= 0 && scale <= 1)) throw InvalidArgumentError.format('scale', `expected in [0, 1], got ${scale}`);
    if (this.weightDecay > 0) {
      const keep = 1 - this.learningRate * this.weightDecay;
      for (const v of variables) tf.tidy(() => v.assign(tf.mul(v, keep)));
    }
    this.shapes = variables.map((v) => [...v.shape]);
    const internals = this.adam as unknown as TfjsAdamInternals;
    const native = nativeAdamAvailable() && [...variables, ...grads].every((t) => t.dtype === 'float32');
    if (native) {
      this.host ??= HostAdamState.fromTfjs(internals);
      if (this.host.step(variables, grads, scale, internals)) return;
    }
    if (this.host !== null) {
      this.host.toTfjs(internals, variables);
      this.host = null;
    }
    if (scale === 1) {
      this.adam.applyGradients(variables.map((v, i) => ({ name: v.name, tensor: grads[i] as tf.Tensor })));
      return;
    }
    const scaled = grads.map((g) => tf.mul(g, scale));
    try {
      this.adam.applyGradients(variables.map((v, i) => ({ name: v.name, tensor: scaled[i] as tf.Tensor })));
    } finally {
      tf.dispose(scaled);
    }
  }

  /** Bytes of optimizer state kept outside the tensor backend (the native path's moments), 0 otherwise. */
  get hostBytes(): number {
    return this.host?.bytes ?? 0;
  }

  /** `<prefix>/iterations`, `<prefix>/accBeta1`, `<prefix>/accBeta2`, then `<prefix>/m/<i>`, `<prefix>/v/<i>` per variable. */
  async getState(): Promise<NamedArray[]> {
    const p = this.prefix;
    if (this.host !== null) return this.hostState(this.host);
    const weights = await this.adam.getWeights();
    const [iterations, ...moments] = weights;
    const out: NamedArray[] = [{ name: `${p}/iterations`, shape: [], data: Float32Array.of((await iterations.tensor.data())[0]) }];
    iterations.tensor.dispose();
    const internals = this.adam as unknown as TfjsAdamInternals;
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

  /** {@link getState} from the native path's state: the same names, order and values tfjs' would give. */
  private hostState(host: HostAdamState): NamedArray[] {
    const p = this.prefix;
    const out: NamedArray[] = [
      { name: `${p}/iterations`, shape: [], data: Float32Array.of(host.iterations) },
      { name: `${p}/accBeta1`, shape: [], data: Float32Array.of(host.accBeta1) },
      { name: `${p}/accBeta2`, shape: [], data: Float32Array.of(host.accBeta2) },
    ];
    const present = host.moments.flatMap((m, i) => (m === undefined ? [] : [{ i, m }]));
    for (const kind of ['m', 'v'] as const) {
      for (const { i, m } of present) out.push({ name: `${p}/${kind}/${i}`, shape: [...(this.shapes[i] ?? [m[kind].length])], data: m[kind].slice() });
    }
    return out;
  }

  /** Restores what {@link getState} returned for these `variables`; the next update continues exactly. */
  async setState(byName: ReadonlyMap<string, NamedArray>, variables: readonly tf.Variable[]): Promise<void> {
    const p = this.prefix;
    const iterations = byName.get(`${p}/iterations`);
    if (iterations === undefined) throw InvalidArgumentError.format('state.optimizer', `missing '${p}/iterations'`);
    const entries: { m: NamedArray; v: NamedArray }[] = [];
    for (let i = 0; i < variables.length; i++) {
      const pair = { m: byName.get(`${p}/m/${i}`), v: byName.get(`${p}/v/${i}`) };
      for (const kind of ['m', 'v'] as const) {
        const entry = pair[kind];
        if (entry !== undefined && entry.shape.join(',') !== variables[i].shape.join(',')) {
          throw InvalidArgumentError.format(`state.optimizer['${p}/${kind}/${i}']`, `shape [${entry.shape}] ≠ variable shape [${variables[i].shape}]`);
        }
      }
      if (pair.m !== undefined && pair.v !== undefined) entries.push(pair as { m: NamedArray; v: NamedArray });
    }
    const found = variables.reduce((n, _, i) => n + (byName.has(`${p}/m/${i}`) ? 1 : 0) + (byName.has(`${p}/v/${i}`) ? 1 : 0), 0);
    if (found !== 0 && found !== 2 * variables.length) {
      throw InvalidArgumentError.format('state.optimizer', `expected ${p} moments for all ${variables.length} variables or none, got ${found / 2}`);
    }
    const accBeta1 = byName.get(`${p}/accBeta1`);
    const accBeta2 = byName.get(`${p}/accBeta2`);
    this.shapes = variables.map((v) => [...v.shape]);
    const internals = this.adam as unknown as TfjsAdamInternals;
    if (nativeAdamAvailable() && accBeta1 !== undefined && accBeta2 !== undefined) {
      // Straight into host memory: the moments never pass through the heap.
      tf.dispose([...internals.accumulatedFirstMoment, ...internals.accumulatedSecondMoment].flatMap((x) => (x === undefined ? [] : [x.variable])));
      internals.accumulatedFirstMoment = [];
      internals.accumulatedSecondMoment = [];
      const host = new HostAdamState(internals.beta1, internals.beta2);
      host.iterations = iterations.data[0] as number;
      host.accBeta1 = accBeta1.data[0] as number;
      host.accBeta2 = accBeta2.data[0] as number;
      host.moments = entries.map(({ m, v }) => ({ m: Float32Array.from(m.data), v: Float32Array.from(v.data) }));
      this.host = host;
      return;
    }
    this.host = null;
    const moments: NamedTensor[] = [];
    for (const kind of ['m', 'v'] as const) {
      for (const [i, pair] of entries.entries()) moments.push({ name: `${variables[i].name}/${kind}`, tensor: tf.tensor(pair[kind].data, pair[kind].shape, 'float32') });
    }
    const previous = await this.adam.getWeights();
    const iter: NamedTensor = { name: 'iter', tensor: tf.scalar(iterations.data[0], 'int32') };
    await this.adam.setWeights([iter, ...moments]);
    tf.dispose([iter.tensor, ...moments.map((m) => m.tensor), ...previous.map((x) => x.tensor)]);
    for (const [key, saved] of [['accBeta1', accBeta1], ['accBeta2', accBeta2]] as const) {
      const variable = internals[key];
      if (saved !== undefined && variable instanceof tf.Variable) tf.tidy(() => variable.assign(tf.scalar(saved.data[0] as number)));
    }
  }

  /** Frees the optimizer's state. */
  dispose(): void {
    this.adam.dispose();
    this.host = null;
  }
}
