/**
 * One base model (a Hugging Face folder) shared by the local engine's LoRA models: the frozen
 * weights are loaded once, every trained model is an adapter over them, and what they save lives
 * under one checkpoint root. `turnwise tinker serve` holds one of these; an in-process run gets one
 * through {@link LocalLoraEngine.open}.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import { inspectHfModel, loadHfModel } from '../../models/hf/hf-model.js';
import { LORA_TARGETS, type LoraSpec } from '../../models/lora/lora.js';
import type { NamedWeight, TransformerModel } from '../../models/transformer/model.js';
import type { LossReduction } from '../engine.js';
import { checkpointFolder, readPeftAdapter } from './checkpoint-files.js';

/** LoRA alpha of every adapter this engine creates (SkyRL tx fixes it at 32; the scale is 32 / rank). */
export const LORA_ALPHA = 32;

/** Settings shared by every model on a base. */
export interface LocalLoraBaseOptions {
  /** The base model's name on the API (default: the folder's absolute path, as SkyRL names it). */
  readonly name?: string;
  /** Root of saved checkpoints (default: a fresh temporary folder). */
  readonly checkpointsDir?: string;
  /** Largest LoRA rank accepted (default 64). */
  readonly maxLoraRank?: number;
  /** How per-token losses are reduced into a step's gradient (default `sum`, Tinker's documented rule). */
  readonly reduction?: LossReduction;
  /** Tie q/k/v and gate/up `lora_A` as SkyRL tx does (default false: one A per projection, as PEFT). */
  readonly sharedA?: boolean;
}

/** Sampler adapters kept ready (a model each; the least recently used is freed first). */
const SAMPLER_CACHE_SIZE = 4;

/**
 * The shared base (module comment).
 * @example
 * const base = await LocalLoraBase.load('test/fixtures/tinker-skyrl/model', { reduction: 'sequence-mean', sharedA: true });
 * const engine = base.createEngine({ modelId: 'model_1', rank: 8, seed: 42 });
 */
export class LocalLoraBase {
  private readonly samplers = new Map<string, TransformerModel>();
  private closed = false;

  private constructor(
    /** The frozen base model (no adapters). */
    readonly model: TransformerModel,
    /** The folder it was loaded from (absolute). */
    readonly folder: string,
    readonly name: string,
    readonly checkpointsDir: string,
    readonly maxLoraRank: number,
    readonly reduction: LossReduction,
    readonly sharedA: boolean,
  ) {}

  /** Loads the folder's config and weights. */
  static async load(folder: string, options: LocalLoraBaseOptions = {}): Promise<LocalLoraBase> {
    const absolute = resolve(folder);
    const info = await inspectHfModel(absolute);
    const model = await loadHfModel(absolute, info);
    const checkpoints = options.checkpointsDir ?? (await mkdtemp(join(tmpdir(), 'turnwise-lora-')));
    const maxRank = options.maxLoraRank ?? 64;
    if (!(Number.isInteger(maxRank) && maxRank >= 1)) throw InvalidArgumentError.format('maxLoraRank', `expected a positive integer, got ${maxRank}`);
    return new LocalLoraBase(model, absolute, options.name ?? absolute, resolve(checkpoints), maxRank, options.reduction ?? 'sum', options.sharedA === true);
  }

  /** True when `name` names this base (its API name or its folder). */
  isNamed(name: string): boolean {
    return name === this.name || resolve(name) === this.folder;
  }

  /**
   * The LoRA spec of a new adapter of `rank` on every projection (alpha {@link LORA_ALPHA}),
   * refusing a rank outside 1..maxLoraRank with SkyRL's wording.
   * @example base.loraSpec(8) // { rank: 8, alpha: 32, dropout: 0, targets: [7 projections], sharedA: false }
   */
  loraSpec(rank: number): LoraSpec {
    if (!(Number.isInteger(rank) && rank >= 1 && rank <= this.maxLoraRank)) throw InvalidArgumentError.format('lora_config.rank', `LoRA rank ${rank} must be between 1 and ${this.maxLoraRank}`);
    return { rank, alpha: LORA_ALPHA, dropout: 0, targets: [...LORA_TARGETS], sharedA: this.sharedA };
  }

  /**
   * A new trained model over this base: fresh adapters (A from `seed`, B zero) or `initial` PEFT weights.
   * @example const model = base.adapterModel(base.loraSpec(8), 42);
   */
  adapterModel(spec: LoraSpec, seed: number, initial?: ReadonlyMap<string, NamedWeight>): TransformerModel {
    this.checkOpen();
    return this.model.withOwnAdapters(spec, initial ?? Rng.fromSeed(seed).fork('lora'));
  }

  /**
   * The model that samples from a sampler checkpoint of `modelId` (read from disk once, then kept
   * among the {@link SAMPLER_CACHE_SIZE} most recently used).
   * @example const sampler = await base.samplerModel('model_1', 'final');
   */
  async samplerModel(modelId: string, name: string): Promise<TransformerModel> {
    this.checkOpen();
    const key = `${modelId}/${name}`;
    const cached = this.samplers.get(key);
    if (cached !== undefined) {
      this.samplers.delete(key);
      this.samplers.set(key, cached);
      return cached;
    }
    const adapter = await readPeftAdapter(checkpointFolder(this.checkpointsDir, modelId, 'sampler', name)).catch((err: Error) => {
      throw InvalidArgumentError.format('model_path', `no sampler weights '${name}' for model ${modelId} (${err.message})`);
    });
    const model = this.model.withOwnAdapters({ ...adapter.spec, sharedA: false }, adapter.weights);
    this.samplers.set(key, model);
    if (this.samplers.size > SAMPLER_CACHE_SIZE) {
      const [oldest, evicted] = this.samplers.entries().next().value as [string, TransformerModel];
      this.samplers.delete(oldest);
      evicted.dispose();
    }
    return model;
  }

  /** Drops a cached sampler model (its checkpoint was deleted). */
  forgetSampler(modelId: string, name: string): void {
    const key = `${modelId}/${name}`;
    this.samplers.get(key)?.dispose();
    this.samplers.delete(key);
  }

  /** Frees the sampler models and the base weights. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const m of this.samplers.values()) m.dispose();
    this.samplers.clear();
    this.model.dispose();
  }

  private checkOpen(): void {
    if (this.closed) throw InvalidArgumentError.format('engine', 'the base model was closed');
  }
}
