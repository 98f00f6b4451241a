/**
 * The critic of PPO: a linear value head `V = h·w + b` on final-normed hidden states at the
 * target positions, either on the policy's own trunk (`shared`: one decoder pass serves both, and
 * the value loss also shapes the trunk) or on a separate small model (`separate`: its own trunk,
 * nothing shared with the policy). Values are predicted at the position before each agent token,
 * i.e. V(s_t) of the context the token was chosen in.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { tf } from '../backend/tf.js';
import type { NamedArray } from './optimizer.js';
import type { TrainBatch } from '../models/train-batch.js';

/** What a separate critic trunk provides (a `TransformerModel` does). */
export interface HiddenModel {
  /** [N, d] final-normed hidden states at `batch.targetPositions`. */
  forwardHidden(batch: TrainBatch): tf.Tensor2D;
  trainableVariables(): tf.Variable[];
  namedWeights(): Map<string, { shape: number[]; data: Float32Array }>;
  loadNamedWeights(weights: Map<string, { shape: number[]; data: Float32Array }>): void;
  dispose(): void;
}

/** How the critic is built. */
export type CriticSpec =
  | { readonly trunk: 'shared'; readonly dModel: number }
  | { readonly trunk: 'separate'; readonly model: HiddenModel; readonly dModel: number };

/**
 * Value head on a trunk (PPO critic, Schulman et al. 2017, arXiv:1707.06347; verl `dp_critic`).
 * Shape: hidden [N, d] → values [N].
 * @example
 * const critic = new Critic({ trunk: 'shared', dModel: 64 });
 * const values = critic.values(batch, policy.forwardTrainWithHidden(batch, 1).hidden); // [N]
 */
export class Critic {
  readonly trunk: 'shared' | 'separate';
  private readonly model: HiddenModel | null;
  private readonly w: tf.Variable; // [d, 1]
  private readonly b: tf.Variable; // [1]

  constructor(spec: CriticSpec) {
    if (!(Number.isInteger(spec.dModel) && spec.dModel > 0)) throw InvalidArgumentError.format('dModel', `expected a positive integer, got ${spec.dModel}`);
    this.trunk = spec.trunk;
    this.model = spec.trunk === 'separate' ? spec.model : null;
    // Zero init: V ≡ 0 at the start, so the first advantages are plain discounted returns.
    this.w = tf.variable(tf.zeros([spec.dModel, 1]), true);
    this.b = tf.variable(tf.zeros([1]), true);
  }

  /** True when the values are read off the policy's hidden states (pass them to {@link values}). */
  get usesPolicyHidden(): boolean {
    return this.trunk === 'shared';
  }

  /** Variables the critic optimizer updates: the head, plus the trunk when it is separate. */
  trainableVariables(): tf.Variable[] {
    return [this.w, this.b, ...(this.model?.trainableVariables() ?? [])];
  }

  /**
   * [N] values at the batch's target positions. `policyHidden` ([N, d], from the policy's
   * `forwardTrainWithHidden`) is required for a shared trunk and ignored for a separate one.
   */
  values(batch: TrainBatch, policyHidden: tf.Tensor2D | null): tf.Tensor1D {
    return tf.tidy(() => {
      let hidden: tf.Tensor2D;
      if (this.model !== null) hidden = this.model.forwardHidden(batch);
      else if (policyHidden !== null) hidden = policyHidden;
      else throw InvalidArgumentError.format('policyHidden', 'a shared-trunk critic needs the policy hidden states');
      return tf.reshape(tf.add(tf.matMul(hidden, this.w), this.b), [-1]) as tf.Tensor1D;
    });
  }

  /** Critic weights as named arrays (`critic/head/w`, `critic/head/b`, `critic/trunk/<name>`), for checkpoints. */
  namedArrays(): NamedArray[] {
    const out: NamedArray[] = [
      { name: 'critic/head/w', shape: [...this.w.shape], data: (this.w.dataSync() as Float32Array).slice() },
      { name: 'critic/head/b', shape: [1], data: (this.b.dataSync() as Float32Array).slice() },
    ];
    for (const [name, weight] of this.model?.namedWeights() ?? []) out.push({ name: `critic/trunk/${name}`, shape: weight.shape, data: weight.data });
    return out;
  }

  /** Loads what {@link namedArrays} returned. */
  loadNamedArrays(byName: ReadonlyMap<string, NamedArray>): void {
    for (const [key, variable] of [['critic/head/w', this.w], ['critic/head/b', this.b]] as const) {
      const entry = byName.get(key);
      if (entry === undefined) throw InvalidArgumentError.format('state.optimizer', `missing '${key}'`);
      if (entry.data.length !== variable.size) throw InvalidArgumentError.format(`state.optimizer['${key}']`, `expected ${variable.size} values, got ${entry.data.length}`);
      tf.tidy(() => variable.assign(tf.tensor(entry.data, variable.shape)));
    }
    if (this.model === null) return;
    const trunk = new Map<string, { shape: number[]; data: Float32Array }>();
    for (const [name, entry] of byName) if (name.startsWith('critic/trunk/')) trunk.set(name.slice('critic/trunk/'.length), { shape: entry.shape, data: entry.data });
    this.model.loadNamedWeights(trunk);
  }

  /** Frees the head and the separate trunk. */
  dispose(): void {
    this.w.dispose();
    this.b.dispose();
    this.model?.dispose();
  }
}
