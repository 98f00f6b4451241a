/**
 * The tfjs variables of one model: the base weights under their HF names (stored [in, out] for
 * linear layers) and, when LoRA is attached, the adapters on top.
 *
 * What "the model's weights" means follows what trains: a full model's named weights are all its
 * base weights; a LoRA model's are its adapters (PEFT names) — that is what the optimizer
 * updates, what a learner publishes to samplers each version, and what a checkpoint must add to
 * the frozen base. The base of a LoRA model can be shared by several models (learner, sampler:
 * {@link WeightStore.sharingBase}), which never write it.
 */
import { CheckpointError, InvalidArgumentError } from '../../core/errors.js';
import type { Rng } from '../../core/rng.js';
import { tf } from '../../backend/tf.js';
import { LoraAdapters, type LoraPair } from '../lora/adapters.js';
import type { LoraSpec } from '../lora/lora.js';
import type { TransformerConfig } from './config.js';
import { fromHfLayout, initialValues, type NamedWeight, storedShape, toHfLayout, type WeightSpec, weightSpecs } from './weights.js';

/** HF checkpoints carry these buffers; they are recomputed here, so loading skips them. */
const IGNORED_CHECKPOINT_SUFFIXES = ['rotary_emb.inv_freq'];

/**
 * Variables of a model.
 * @example
 * const store = new WeightStore(config, Rng.fromSeed(1));
 * store.attachLora({ rank: 8, alpha: 16, dropout: 0, targets: ['q_proj', 'v_proj'] }, rng);
 * store.trainableVariables(); // the adapters only
 */
export class WeightStore {
  readonly specs: readonly WeightSpec[];
  private vars: Map<string, tf.Variable>;
  private readonly ownsBase: boolean;
  private adapters: LoraAdapters | null = null;
  private adaptersOn = true;

  /** Random (from `rng`) or given HF-layout base weights; `shared` reuses another store's variables. */
  constructor(
    private readonly config: TransformerConfig,
    source: Rng | ReadonlyMap<string, NamedWeight> | { readonly shared: Map<string, tf.Variable> },
  ) {
    this.specs = weightSpecs(config);
    if ('shared' in source) {
      this.vars = source.shared;
      this.ownsBase = false;
      return;
    }
    this.vars = new Map();
    this.ownsBase = true;
    const values = source instanceof Map ? checkedHfWeights(this.specs, source, config.tieEmbeddings) : null;
    this.specs.forEach((spec, i) => {
      const data = values === null ? initialValues(spec, (source as Rng).fork('init', i)) : (values[i] as Float32Array);
      const initial = tf.tensor(data, storedShape(spec));
      // Unnamed: tfjs variable names are global, and several models may coexist.
      this.vars.set(spec.name, tf.variable(initial, true));
      initial.dispose(); // the variable holds its own reference to the data; kept, this tensor would outlive dispose()
    });
  }

  /** The LoRA spec when adapters are attached, else null. */
  get lora(): LoraSpec | null {
    return this.adapters?.spec ?? null;
  }

  /** A base variable by HF name (throws naming it when absent). */
  get(name: string): tf.Variable {
    const v = this.vars.get(name);
    if (v === undefined) throw InvalidArgumentError.format('model', `no weight ${name}`);
    return v;
  }

  /** A base variable, or undefined (optional tensors such as biases). */
  find(name: string): tf.Variable | undefined {
    return this.vars.get(name);
  }

  /** The adapter of a module while adapters are on, else undefined. */
  loraOf(module: string): LoraPair | undefined {
    return this.adaptersOn ? this.adapters?.pair(module) : undefined;
  }

  /** Every parameter (base + adapters). */
  get parameterCount(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.size;
    return n + (this.adapters?.parameterCount ?? 0);
  }

  /** Parameters the optimizer updates. */
  get trainableParameterCount(): number {
    return this.trainableVariables().reduce((n, v) => n + v.size, 0);
  }

  /**
   * Attaches fresh LoRA adapters (or `weights` in PEFT layout); the base becomes frozen.
   * @example store.attachLora(spec, rng.fork('lora'))
   */
  attachLora(spec: LoraSpec, source: Rng | ReadonlyMap<string, NamedWeight>): void {
    if (this.adapters !== null) throw InvalidArgumentError.format('model.lora', 'adapters are already attached');
    this.adapters = new LoraAdapters(this.config, spec, source);
    // Frozen: tf.variableGrads computes gradients for trainable variables only.
    for (const v of this.vars.values()) v.trainable = false;
  }

  /** Runs `fn` with the adapters off (the base model: a LoRA run's KL reference). */
  withAdaptersOff<T>(fn: () => T): T {
    const before = this.adaptersOn;
    this.adaptersOn = false;
    try {
      return fn();
    } finally {
      this.adaptersOn = before;
    }
  }

  /** The variables the optimizer updates: the adapters with LoRA, else every base weight, in a fixed order. */
  trainableVariables(): tf.Variable[] {
    if (this.adapters !== null) return this.adapters.variables();
    return this.specs.map((s) => this.get(s.name));
  }

  /** What trains, as plain data (copies): PEFT adapter tensors with LoRA, else every base weight in HF layout. */
  namedWeights(): Map<string, NamedWeight> {
    return this.adapters !== null ? this.adapters.peftWeights() : this.baseNamedWeights();
  }

  /** Loads what {@link namedWeights} returns (strict: every tensor present with its shape, nothing unknown). */
  loadNamedWeights(weights: ReadonlyMap<string, NamedWeight>): void {
    if (this.adapters !== null) {
      this.adapters.loadPeftWeights(weights);
      return;
    }
    this.loadBase(weights);
  }

  /** Every base weight in HF layout (Linear weights [out, in]), copies; a tied model has no `lm_head.weight`. */
  baseNamedWeights(): Map<string, NamedWeight> {
    const out = new Map<string, NamedWeight>();
    for (const spec of this.specs) out.set(spec.name, toHfLayout(spec, Float32Array.from(this.get(spec.name).dataSync() as Float32Array)));
    return out;
  }

  /** Base weights with every adapter merged in (`W + scale * B·A`): a plain model for export. */
  mergedNamedWeights(): Map<string, NamedWeight> {
    const out = this.baseNamedWeights();
    if (this.adapters === null) return out;
    for (const m of this.adapters.modules) {
      const name = `${m.module}.weight`;
      const base = out.get(name) as NamedWeight;
      const delta = this.adapters.deltaOf(m.module) as Float32Array;
      const merged = new Float32Array(base.data.length);
      for (let i = 0; i < merged.length; i++) merged[i] = base.data[i] + delta[i];
      out.set(name, { shape: base.shape, data: merged });
    }
    return out;
  }

  /** Writes base weights (HF layout). A LoRA model's base is frozen and may be shared: refused there. */
  loadBase(weights: ReadonlyMap<string, NamedWeight>): void {
    if (!this.ownsBase || this.adapters !== null) throw InvalidArgumentError.format('weights', 'the base of a LoRA model is frozen; load adapter weights instead');
    const converted = checkedHfWeights(this.specs, weights, this.config.tieEmbeddings);
    this.specs.forEach((spec, i) => {
      const value = tf.tensor(converted[i], storedShape(spec));
      this.get(spec.name).assign(value);
      value.dispose();
    });
  }

  /**
   * A store over the SAME base variables (no copy) with a copy of this store's adapters: the
   * sampler side of a LoRA run. Only for LoRA stores (a full model's weights change every step).
   */
  sharingBase(rng: Rng): WeightStore {
    if (this.adapters === null) throw InvalidArgumentError.format('model', 'only a LoRA model shares its (frozen) base');
    const other = new WeightStore(this.config, { shared: this.vars });
    other.attachLora(this.adapters.spec, rng);
    other.loadNamedWeights(this.namedWeights());
    return other;
  }

  /**
   * A store over the SAME base variables (no copy) with adapters of its own (`spec`, fresh from an
   * rng or given PEFT weights): one of several LoRA models trained on one base. The base becomes
   * frozen; this store may have adapters or not.
   */
  withOwnAdapters(spec: LoraSpec, source: Rng | ReadonlyMap<string, NamedWeight>): WeightStore {
    const other = new WeightStore(this.config, { shared: this.vars });
    other.attachLora(spec, source);
    return other;
  }

  /** Frees the adapters, and the base when this store owns it. */
  dispose(): void {
    this.adapters?.dispose();
    this.adapters = null;
    if (this.ownsBase) for (const v of this.vars.values()) v.dispose();
    this.vars = new Map(); // never clear(): a shared base's map belongs to its owner
  }
}

/**
 * Every spec's stored-layout data from HF-layout weights: each present with its HF shape
 * ({@link CheckpointError} names the missing or mismatched tensor), `lm_head.weight` ignored when
 * embeddings are tied, and an unknown name an error (it means another architecture).
 */
function checkedHfWeights(specs: readonly WeightSpec[], weights: ReadonlyMap<string, NamedWeight>, tied: boolean): Float32Array[] {
  const known = new Set(specs.map((s) => s.name));
  for (const name of weights.keys()) {
    const ignorable = IGNORED_CHECKPOINT_SUFFIXES.some((s) => name.endsWith(s)) || (name === 'lm_head.weight' && tied);
    if (!known.has(name) && !ignorable) throw new CheckpointError(name, 'unknown tensor for this model config');
  }
  return specs.map((spec) => {
    const weight = weights.get(spec.name);
    if (weight === undefined) throw new CheckpointError(spec.name, 'missing tensor');
    return fromHfLayout(spec, weight);
  });
}
