/**
 * The LoRA adapters of one model as tfjs variables: per adapted module an `A [in, r]` and a
 * `B [r, out]` (stored transposed from PEFT's `[r, in]` / `[out, r]`, so the adapter is
 * `x · A · B` like every other projection here). Read and written under PEFT's names.
 */
import { CheckpointError } from '../../core/errors.js';
import type { Rng } from '../../core/rng.js';
import { tf } from '../../backend/tf.js';
import type { TransformerConfig } from '../transformer/config.js';
import { type NamedWeight, transpose2d } from '../transformer/weights.js';
import { initialLoraA, type LoraModule, type LoraSpec, type LoraTarget, loraModules, loraScale, peftNames, SHARED_A_GROUPS, validateLoraSpec } from './lora.js';

/** One module's adapter, ready for `project()`. */
export interface LoraPair {
  readonly a: tf.Variable<typeof tf.Rank.R2>; // [in, r]
  readonly b: tf.Variable<typeof tf.Rank.R2>; // [r, out]
  readonly scale: number;
}

/**
 * Adapter variables for every target module of a model.
 * @example
 * const adapters = new LoraAdapters(model.config, { rank: 8, alpha: 16, dropout: 0, targets: ['q_proj', 'v_proj'] }, rng);
 * adapters.pair('model.layers.0.self_attn.q_proj') // { a, b, scale: 2 }
 */
export class LoraAdapters {
  readonly modules: readonly LoraModule[];
  readonly scale: number;
  private readonly pairs = new Map<string, LoraPair>();

  /** Fresh adapters (A random from `rng`, B zero), or the given PEFT-layout weights. */
  constructor(
    config: TransformerConfig,
    readonly spec: LoraSpec,
    source: Rng | ReadonlyMap<string, NamedWeight>,
  ) {
    validateLoraSpec(spec);
    this.modules = loraModules(config, spec);
    this.scale = loraScale(spec);
    const r = spec.rank;
    const given = source instanceof Map ? checkedPeftWeights(this.modules, r, source) : null;
    if (given !== null) checkSharedA(this.modules, given, this.owners);
    this.modules.forEach((m, i) => {
      const owner = this.owners.get(m.module);
      const aPeft = given === null ? initialLoraA(m, r, (source as Rng).fork('lora', i)) : (given[i] as { a: Float32Array; b: Float32Array }).a;
      const bPeft = given === null ? new Float32Array(m.outFeatures * r) : (given[i] as { a: Float32Array; b: Float32Array }).b;
      // A tied module uses its group's first A (one variable, so tfjs sums the branches' gradients)
      const a = owner === undefined ? tensorVariable(transpose2d(aPeft, r, m.inFeatures), [m.inFeatures, r]) : (this.pairs.get(owner) as LoraPair).a;
      const b = tensorVariable(transpose2d(bPeft, m.outFeatures, r), [r, m.outFeatures]);
      this.pairs.set(m.module, { a, b, scale: this.scale });
    });
  }

  /** Tied module → the module whose A it uses (empty unless `spec.sharedA`). */
  private get owners(): Map<string, string> {
    if (this.ownerMap === null) this.ownerMap = sharedAOwners(this.modules, this.spec);
    return this.ownerMap;
  }
  private ownerMap: Map<string, string> | null = null;

  /** The adapter of `module` (e.g. `model.layers.0.mlp.up_proj`), or undefined when it has none. */
  pair(module: string): LoraPair | undefined {
    return this.pairs.get(module);
  }

  /** Every adapter variable, A then B per module, in module order (the optimizer's order). */
  variables(): tf.Variable[] {
    return [...new Set([...this.pairs.values()].flatMap((p) => [p.a, p.b]))];
  }

  /** Adapter parameters. */
  get parameterCount(): number {
    return this.variables().reduce((n, v) => n + v.size, 0);
  }

  /** The adapters under PEFT's names and layout (copies), for `adapter_model.safetensors`. */
  peftWeights(): Map<string, NamedWeight> {
    const out = new Map<string, NamedWeight>();
    const r = this.spec.rank;
    for (const m of this.modules) {
      const pair = this.pairs.get(m.module) as LoraPair;
      const names = peftNames(m.module);
      out.set(names.a, { shape: [r, m.inFeatures], data: transpose2d(pair.a.dataSync() as Float32Array, m.inFeatures, r) });
      out.set(names.b, { shape: [m.outFeatures, r], data: transpose2d(pair.b.dataSync() as Float32Array, r, m.outFeatures) });
    }
    return out;
  }

  /** Loads PEFT-layout weights (every module's A and B, exact shapes; an unknown name is an error). */
  loadPeftWeights(weights: ReadonlyMap<string, NamedWeight>): void {
    const r = this.spec.rank;
    const values = checkedPeftWeights(this.modules, r, weights);
    checkSharedA(this.modules, values, this.owners);
    this.modules.forEach((m, i) => {
      const pair = this.pairs.get(m.module) as LoraPair;
      const { a, b } = values[i] as { a: Float32Array; b: Float32Array };
      assign(pair.a, transpose2d(a, r, m.inFeatures), [m.inFeatures, r]);
      assign(pair.b, transpose2d(b, m.outFeatures, r), [r, m.outFeatures]);
    });
  }

  /**
   * `scale * B·A` of one module in HF layout `[out, in]`: what merging adds to its weight.
   * @example const delta = adapters.deltaOf('model.layers.0.self_attn.q_proj');
   */
  deltaOf(module: string): Float32Array | null {
    const pair = this.pairs.get(module);
    if (pair === undefined) return null;
    return tf.tidy(() => tf.transpose(tf.mul(tf.matMul(pair.a, pair.b), this.scale)).dataSync() as Float32Array);
  }

  dispose(): void {
    for (const v of this.variables()) v.dispose();
    this.pairs.clear();
  }
}

/** For `spec.sharedA`: each tied module (k, v, up) → the first module of its group in the same layer (q, gate). */
function sharedAOwners(modules: readonly LoraModule[], spec: LoraSpec): Map<string, string> {
  const owners = new Map<string, string>();
  if (spec.sharedA !== true) return owners;
  const names = new Set(modules.map((m) => m.module));
  for (const m of modules) {
    const target = m.module.slice(m.module.lastIndexOf('.') + 1) as LoraTarget;
    const group = SHARED_A_GROUPS.find((g) => g.includes(target));
    if (group === undefined) continue;
    const prefix = m.module.slice(0, m.module.lastIndexOf('.') + 1);
    const first = group.map((t) => `${prefix}${t}`).find((name) => names.has(name));
    if (first !== undefined && first !== m.module) owners.set(m.module, first);
  }
  return owners;
}

/** Tied A matrices must be equal in the files (SkyRL refuses such an adapter too). */
function checkSharedA(modules: readonly LoraModule[], values: ReadonlyArray<{ a: Float32Array }>, owners: ReadonlyMap<string, string>): void {
  const index = new Map(modules.map((m, i) => [m.module, i]));
  for (const [module, owner] of owners) {
    const a = (values[index.get(module) as number] as { a: Float32Array }).a;
    const b = (values[index.get(owner) as number] as { a: Float32Array }).a;
    if (a.some((x, i) => x !== b[i])) throw new CheckpointError(peftNames(module).a, `differs from ${peftNames(owner).a}, but the adapter ties their lora_A (sharedA)`);
  }
}

function tensorVariable(data: Float32Array, shape: [number, number]): tf.Variable<typeof tf.Rank.R2> {
  const initial = tf.tensor2d(data, shape);
  const v = tf.variable(initial, true);
  initial.dispose();
  return v;
}

function assign(v: tf.Variable, data: Float32Array, shape: number[]): void {
  const t = tf.tensor(data, shape);
  v.assign(t);
  t.dispose();
}

function checkedPeftWeights(modules: readonly LoraModule[], rank: number, weights: ReadonlyMap<string, NamedWeight>): Array<{ a: Float32Array; b: Float32Array }> {
  const known = new Set(modules.flatMap((m) => Object.values(peftNames(m.module))));
  for (const name of weights.keys()) if (!known.has(name)) throw new CheckpointError(name, 'unknown adapter tensor for this LoRA config (other target modules or model?)');
  return modules.map((m) => {
    const names = peftNames(m.module);
    const a = weights.get(names.a);
    const b = weights.get(names.b);
    if (a === undefined) throw new CheckpointError(names.a, 'missing adapter tensor');
    if (b === undefined) throw new CheckpointError(names.b, 'missing adapter tensor');
    expectShape(names.a, a, [rank, m.inFeatures]);
    expectShape(names.b, b, [m.outFeatures, rank]);
    return { a: a.data, b: b.data };
  });
}

function expectShape(name: string, w: NamedWeight, shape: number[]): void {
  if (w.shape.length !== shape.length || w.shape.some((n, i) => n !== shape[i]) || w.data.length !== shape[0] * shape[1]) {
    throw new CheckpointError(name, `shape mismatch: expected [${shape.join(', ')}], got [${w.shape.join(', ')}]`);
  }
}
