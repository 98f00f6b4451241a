/**
 * Where the local engine keeps what it saves, one folder per checkpoint under a root:
 *
 *     <root>/<modelId>/sampler_weights/<name>/   adapter_config.json, adapter_model.safetensors (PEFT)
 *     <root>/<modelId>/weights/<name>/           the same, plus optimizer.safetensors and engine_state.json
 *
 * The PEFT config names its `target_modules` explicitly (a `null` makes PEFT fall back to q/v only
 * for Qwen3 and silently drop the rest). Reading accepts an adapter whose `target_modules` is null,
 * as SkyRL tx writes it, by taking the modules its tensors cover. Folders are written atomically.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFolderAtomic } from '../../core/atomic-file.js';
import { CheckpointError, InvalidArgumentError } from '../../core/errors.js';
import { adapterConfigJson, LORA_TARGETS, type LoraSpec, loraSpecFromAdapterConfig } from '../../models/lora/lora.js';
import { decodeSafetensors, encodeSafetensors, type TensorRecord } from '../../models/safetensors.js';
import type { NamedWeight } from '../../models/transformer/weights.js';
import type { AdamWState } from './optax-adamw.js';

/** A checkpoint's kind, as its `tinker://` path spells it. */
export type CheckpointKind = 'training' | 'sampler';

/** An adapter read from disk. */
export interface PeftAdapter {
  readonly spec: LoraSpec;
  readonly weights: Map<string, NamedWeight>;
}

/** What a training checkpoint adds to the adapter. */
export interface TrainingState {
  /** The optimizer state, in the order of the model's trainable variables. */
  readonly adam: AdamWState;
  /** Whether q/k/v and gate/up share their lora_A (not a PEFT setting, so kept here). */
  readonly sharedA: boolean;
  readonly rank: number;
}

/** A saved checkpoint as a listing shows it. */
export interface CheckpointEntry {
  readonly modelId: string;
  readonly kind: CheckpointKind;
  readonly name: string;
  readonly folder: string;
  readonly time: Date;
  readonly sizeBytes: number;
}

const KIND_FOLDER: Record<CheckpointKind, string> = { training: 'weights', sampler: 'sampler_weights' };

/**
 * Refuses a checkpoint name that is not one plain path segment (it becomes a folder name).
 * @example checkCheckpointName('step-000010') // ok; '../x' throws
 */
export function checkCheckpointName(name: string, field = 'path'): void {
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(name)) throw InvalidArgumentError.format(field, `checkpoint name ${JSON.stringify(name)}: expected 1-128 letters, digits, '_', '.', '-' (not starting with '.' or '-')`);
}

/** The folder of a checkpoint. */
export function checkpointFolder(root: string, modelId: string, kind: CheckpointKind, name: string): string {
  return join(root, modelId, KIND_FOLDER[kind], name);
}

/** True when the checkpoint's folder exists. */
export async function checkpointExists(root: string, modelId: string, kind: CheckpointKind, name: string): Promise<boolean> {
  return stat(checkpointFolder(root, modelId, kind, name)).then(
    () => true,
    () => false,
  );
}

function adapterFiles(spec: LoraSpec, weights: ReadonlyMap<string, NamedWeight>, baseModel: string | null) {
  const records: Record<string, TensorRecord> = {};
  for (const [name, w] of weights) records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
  return [
    { name: 'adapter_config.json', data: `${JSON.stringify(adapterConfigJson(spec, baseModel), null, 2)}\n` },
    { name: 'adapter_model.safetensors', data: encodeSafetensors(records, { format: 'pt' }) },
  ];
}

/**
 * Writes a sampler checkpoint (PEFT files only).
 * @example await writeSamplerCheckpoint(root, 'model_1', 'final', spec, weights, '/models/qwen3');
 */
export async function writeSamplerCheckpoint(root: string, modelId: string, name: string, spec: LoraSpec, weights: ReadonlyMap<string, NamedWeight>, baseModel: string | null): Promise<string> {
  const parent = join(root, modelId, KIND_FOLDER.sampler);
  return writeFolderAtomic(parent, name, adapterFiles(spec, weights, baseModel));
}

/**
 * Writes a training checkpoint: the PEFT files, the optimizer moments and the step count.
 * @example await writeTrainingCheckpoint(root, 'model_1', 'step-3', spec, weights, state, base);
 */
export async function writeTrainingCheckpoint(root: string, modelId: string, name: string, spec: LoraSpec, weights: ReadonlyMap<string, NamedWeight>, state: TrainingState, baseModel: string | null): Promise<string> {
  const moments: Record<string, TensorRecord> = {};
  state.adam.m.forEach((m, i) => {
    moments[`m.${i}`] = { dtype: 'F32', shape: [m.length], data: m };
    moments[`v.${i}`] = { dtype: 'F32', shape: [m.length], data: state.adam.v[i] as Float32Array };
  });
  const engineState = { format: 'turnwise-lora-engine/1', step: state.adam.step, arrays: state.adam.m.length, shared_a: state.sharedA, rank: state.rank };
  return writeFolderAtomic(join(root, modelId, KIND_FOLDER.training), name, [
    ...adapterFiles(spec, weights, baseModel),
    { name: 'optimizer.safetensors', data: encodeSafetensors(moments) },
    { name: 'engine_state.json', data: `${JSON.stringify(engineState)}\n` },
  ]);
}

/**
 * Reads a PEFT adapter folder (F32 tensors); a null `target_modules` is taken from the tensors.
 * @example const { spec, weights } = await readPeftAdapter('test/fixtures/tinker-skyrl/sampler-adapter');
 */
export async function readPeftAdapter(folder: string): Promise<PeftAdapter> {
  const configPath = join(folder, 'adapter_config.json');
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (err) {
    throw new CheckpointError(configPath, `cannot read: ${(err as Error).message}`, { cause: err });
  }
  const path = join(folder, 'adapter_model.safetensors');
  const { tensors } = decodeSafetensors(new Uint8Array(await readFile(path)), path);
  const weights = new Map<string, NamedWeight>();
  for (const [name, t] of Object.entries(tensors)) {
    if (t.dtype !== 'F32') throw new CheckpointError(path, `tensor '${name}' has dtype ${t.dtype}; expected F32`);
    weights.set(name, { shape: [...t.shape], data: t.data });
  }
  if (json.target_modules === null || json.target_modules === undefined) {
    const covered = new Set([...weights.keys()].map((n) => /\.(\w+)\.lora_[AB]\.weight$/.exec(n)?.[1]));
    json = { ...json, target_modules: LORA_TARGETS.filter((t) => covered.has(t)) };
  }
  return { spec: loraSpecFromAdapterConfig(json, configPath), weights };
}

/**
 * Reads the optimizer state of a training checkpoint.
 * @example const state = await readTrainingState(folder);
 */
export async function readTrainingState(folder: string): Promise<TrainingState> {
  const statePath = join(folder, 'engine_state.json');
  let json: { step?: unknown; arrays?: unknown; shared_a?: unknown; rank?: unknown };
  try {
    json = JSON.parse(await readFile(statePath, 'utf8'));
  } catch (err) {
    throw new CheckpointError(statePath, `not a training checkpoint of turnwise's engine: ${(err as Error).message}`, { cause: err });
  }
  if (typeof json.step !== 'number' || typeof json.arrays !== 'number') throw new CheckpointError(statePath, 'expected numeric step and arrays');
  const path = join(folder, 'optimizer.safetensors');
  const { tensors } = decodeSafetensors(new Uint8Array(await readFile(path)), path);
  const m: Float32Array[] = [];
  const v: Float32Array[] = [];
  for (let i = 0; i < json.arrays; i++) {
    const mi = tensors[`m.${i}`];
    const vi = tensors[`v.${i}`];
    if (mi?.dtype !== 'F32' || vi?.dtype !== 'F32') throw new CheckpointError(path, `missing or non-F32 moments m.${i} / v.${i}`);
    m.push(mi.data);
    v.push(vi.data);
  }
  return { adam: { step: json.step, m, v }, sharedA: json.shared_a === true, rank: typeof json.rank === 'number' ? json.rank : 0 };
}

/**
 * Every checkpoint saved under `root` for `modelId` (or all models), newest first.
 * @example await listCheckpoints(root, 'model_1')
 */
export async function listCheckpoints(root: string, modelId?: string): Promise<CheckpointEntry[]> {
  const models = modelId === undefined ? await readdir(root).catch(() => [] as string[]) : [modelId];
  const out: CheckpointEntry[] = [];
  for (const model of models) {
    for (const kind of ['training', 'sampler'] as const) {
      const parent = join(root, model, KIND_FOLDER[kind]);
      const names = await readdir(parent).catch(() => [] as string[]);
      for (const name of names) {
        if (name.startsWith('.')) continue;
        const folder = join(parent, name);
        const files = await readdir(folder);
        let size = 0;
        for (const f of files) size += (await stat(join(folder, f))).size;
        out.push({ modelId: model, kind, name, folder, time: (await stat(folder)).mtime, sizeBytes: size });
      }
    }
  }
  return out.sort((a, b) => b.time.getTime() - a.time.getTime() || a.name.localeCompare(b.name));
}
