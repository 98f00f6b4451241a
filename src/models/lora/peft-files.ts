/**
 * PEFT's adapter files in a folder: `adapter_config.json` and `adapter_model.safetensors`
 * (float32 tensors under `base_model.model.<module>.lora_{A,B}.weight`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '../../core/errors.js';
import { readSafetensors, type TensorRecord, writeSafetensors } from '../safetensors.js';
import type { NamedWeight } from '../transformer/weights.js';
import { adapterConfigJson, type LoraSpec, loraSpecFromAdapterConfig } from './lora.js';

/** An adapter as read from disk. */
export interface AdapterFiles {
  readonly spec: LoraSpec;
  readonly weights: Map<string, NamedWeight>;
  /** `base_model_name_or_path` as written (may be relative to the adapter folder, or a hub id). */
  readonly baseModel: string | null;
}

/**
 * True when `folder` holds a PEFT adapter (an `adapter_config.json`).
 * @example if (await isAdapterFolder(dir)) ...
 */
export async function isAdapterFolder(folder: string): Promise<boolean> {
  return readFile(join(folder, 'adapter_config.json'), 'utf8').then(
    () => true,
    () => false,
  );
}

/**
 * Reads a PEFT adapter folder.
 * @example const { spec, weights } = await readAdapterFiles('runs/x/checkpoints/step-000010');
 */
export async function readAdapterFiles(folder: string): Promise<AdapterFiles> {
  const configPath = join(folder, 'adapter_config.json');
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (err) {
    throw new CheckpointError(configPath, `cannot read: ${(err as Error).message}`, { cause: err });
  }
  const spec = loraSpecFromAdapterConfig(json, configPath);
  const path = join(folder, 'adapter_model.safetensors');
  const { tensors } = await readSafetensors(path);
  const weights = new Map<string, NamedWeight>();
  for (const [name, t] of Object.entries(tensors)) {
    if (t.dtype !== 'F32') throw new CheckpointError(path, `tensor '${name}' has dtype ${t.dtype}; adapters must be F32, BF16 or F16`);
    weights.set(name, { shape: [...t.shape], data: t.data });
  }
  const base = json.base_model_name_or_path;
  return { spec, weights, baseModel: typeof base === 'string' ? base : null };
}

/**
 * Writes `adapter_config.json` and `adapter_model.safetensors` into `folder` (which must exist).
 * @example await writeAdapterFiles(tmp, model.lora, model.namedWeights(), '/models/SmolLM2-135M-Instruct');
 */
export async function writeAdapterFiles(folder: string, spec: LoraSpec, weights: ReadonlyMap<string, NamedWeight>, baseModel: string | null): Promise<void> {
  await writeFile(join(folder, 'adapter_config.json'), `${JSON.stringify(adapterConfigJson(spec, baseModel), null, 2)}\n`);
  const records: Record<string, TensorRecord> = {};
  for (const [name, w] of weights) records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
  await writeSafetensors(join(folder, 'adapter_model.safetensors'), records, { format: 'pt' });
}
