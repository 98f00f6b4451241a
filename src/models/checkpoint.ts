/**
 * Checkpoints in Hugging Face layout, so a trained policy opens in other tools:
 *
 * ```
 * <runDir>/checkpoints/step-000010/
 *   config.json            Llama config of the policy model
 *   model.safetensors      weights, HF Llama tensor names
 *   tokenizer.json         HF tokenizer
 *   optimizer.safetensors  optimizer moments (turnwise-specific)
 *   trainer_state.json     step, policy version, horizon scheduler and RNG state, run config
 * <runDir>/checkpoints/latest   name of the newest complete checkpoint
 * ```
 *
 * A checkpoint is written into a temporary folder and renamed into place, and `latest` is updated
 * last, so a crash mid-write never leaves a half checkpoint that resume would pick up.
 */
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '../core/errors.js';
import { faultPoint } from '../core/fault-point.js';
import { readSafetensors, type TensorRecord, writeSafetensors } from './safetensors.js';

/** Named float tensors, as models and optimizers export them. */
export type NamedTensors = Map<string, { shape: number[]; data: Float32Array }>;

/** Everything a checkpoint holds. `state` must be JSON-safe. */
export interface CheckpointContent {
  readonly step: number;
  readonly hfConfig: object;
  readonly weights: NamedTensors;
  readonly tokenizerJson: object;
  readonly optimizer: NamedTensors;
  readonly state: Readonly<Record<string, unknown>>;
}

/** Folder name of a step's checkpoint. @example checkpointName(10) // 'step-000010' */
export function checkpointName(step: number): string {
  return `step-${String(step).padStart(6, '0')}`;
}

function toRecords(tensors: NamedTensors): Record<string, TensorRecord> {
  const out: Record<string, TensorRecord> = {};
  for (const [name, t] of tensors) out[name] = { dtype: 'F32', shape: t.shape, data: t.data };
  return out;
}

function fromRecords(file: Awaited<ReturnType<typeof readSafetensors>>, location: string): NamedTensors {
  const out: NamedTensors = new Map();
  for (const [name, t] of Object.entries(file.tensors)) {
    if (t.dtype !== 'F32') throw new CheckpointError(location, `tensor '${name}' has dtype ${t.dtype}, expected F32`);
    out.set(name, { shape: [...t.shape], data: t.data });
  }
  return out;
}

/**
 * Writes a checkpoint under `<runDir>/checkpoints/` and points `latest` at it.
 * @example const dir = await saveCheckpoint('runs/babyai', content);
 */
export async function saveCheckpoint(runDir: string, content: CheckpointContent): Promise<string> {
  const root = join(runDir, 'checkpoints');
  const name = checkpointName(content.step);
  const finalDir = join(root, name);
  const tmpDir = join(root, `.tmp-${name}`);
  await rm(tmpDir, { recursive: true, force: true });
  await mkdir(tmpDir, { recursive: true });
  await writeFile(join(tmpDir, 'config.json'), `${JSON.stringify(content.hfConfig, null, 2)}\n`);
  await writeSafetensors(join(tmpDir, 'model.safetensors'), toRecords(content.weights), {
    format: 'pt',
    step: String(content.step),
  });
  await writeFile(join(tmpDir, 'tokenizer.json'), JSON.stringify(content.tokenizerJson));
  await writeSafetensors(join(tmpDir, 'optimizer.safetensors'), toRecords(content.optimizer));
  await writeFile(
    join(tmpDir, 'trainer_state.json'),
    `${JSON.stringify({ step: content.step, ...content.state }, null, 2)}\n`,
  );
  await rm(finalDir, { recursive: true, force: true });
  await rename(tmpDir, finalDir);
  // writeFile, spelled out (open truncates, then write) so a fault test can stop in between.
  const latest = await open(join(root, 'latest'), 'w');
  faultPoint('checkpoint-latest-written');
  await latest.writeFile(`${name}\n`);
  await latest.close();
  return finalDir;
}

/**
 * Resolves a checkpoint folder from a run folder (its `latest`) or a checkpoint folder itself.
 * @example await resolveCheckpointDir('runs/babyai') // 'runs/babyai/checkpoints/step-000060'
 */
export async function resolveCheckpointDir(location: string): Promise<string> {
  const direct = await readFile(join(location, 'trainer_state.json'), 'utf8').then(
    () => true,
    () => false,
  );
  if (direct) return location;
  let latest: string;
  try {
    latest = (await readFile(join(location, 'checkpoints', 'latest'), 'utf8')).trim();
  } catch (err) {
    throw new CheckpointError(location, 'neither a checkpoint folder (no trainer_state.json) nor a run folder with checkpoints/latest', {
      cause: err,
    });
  }
  return join(location, 'checkpoints', latest);
}

/**
 * Reads a checkpoint written by {@link saveCheckpoint}.
 * @example const ckpt = await loadCheckpoint(await resolveCheckpointDir('runs/babyai'));
 */
export async function loadCheckpoint(dir: string): Promise<CheckpointContent> {
  const readJson = async (file: string): Promise<Record<string, unknown>> => {
    try {
      return JSON.parse(await readFile(join(dir, file), 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new CheckpointError(join(dir, file), `cannot read JSON: ${(err as Error).message}`, { cause: err });
    }
  };
  const hfConfig = await readJson('config.json');
  const tokenizerJson = await readJson('tokenizer.json');
  const state = await readJson('trainer_state.json');
  const weights = fromRecords(await readSafetensors(join(dir, 'model.safetensors')), join(dir, 'model.safetensors'));
  const optimizer = fromRecords(
    await readSafetensors(join(dir, 'optimizer.safetensors')),
    join(dir, 'optimizer.safetensors'),
  );
  const step = state.step;
  if (typeof step !== 'number') throw new CheckpointError(join(dir, 'trainer_state.json'), "missing numeric 'step'");
  return { step, hfConfig, weights, tokenizerJson, optimizer, state };
}
