/**
 * Checkpoints in Hugging Face layout, so a trained policy opens in other tools:
 *
 * ```
 * <runDir>/checkpoints/step-000010/
 *   config.json            HF config of the policy model, with bos/eos/pad ids
 *   model.safetensors      weights, HF tensor names (a LoRA run: adapter_model.safetensors + adapter_config.json, PEFT's layout)
 *   tokenizer.json         HF tokenizer
 *   tokenizer_config.json  special tokens and the chat template; generation_config.json (eos ids)
 *   optimizer.safetensors  optimizer moments (turnwise-specific)
 *   trainer_state.json     step, policy version, horizon scheduler and RNG state, run config
 * <runDir>/checkpoints/latest   name of the newest complete checkpoint
 * ```
 *
 * Every file is written into a temporary folder and fsynced, the folder is renamed into place, and
 * `latest` is replaced last by write-then-rename (`src/core/atomic-file.ts`), so a crash at any
 * moment leaves only complete checkpoints and a `latest` that names one. Resume still checks:
 * when `latest` is missing or bad it takes the newest complete `step-*` folder and says so.
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '../core/errors.js';
import { type AtomicFile, writeFileAtomic, writeFolderAtomic } from '../core/atomic-file.js';
import { faultPoint } from '../core/fault-point.js';
import { encodeSafetensors, readSafetensors, type TensorRecord } from './safetensors.js';

/** Named float tensors, as models and optimizers export them. */
export type NamedTensors = Map<string, { shape: number[]; data: Float32Array }>;

/** Everything a checkpoint holds. `state` must be JSON-safe. */
export interface CheckpointContent {
  readonly step: number;
  readonly hfConfig: object;
  /** What trains: every weight (`model.safetensors`), or a LoRA run's adapters (`adapter_model.safetensors`, PEFT names). */
  readonly weights: NamedTensors;
  readonly tokenizerJson: object;
  readonly optimizer: NamedTensors;
  readonly state: Readonly<Record<string, unknown>>;
  /** A LoRA run's `adapter_config.json`: the weights are then the adapters. */
  readonly adapterConfig?: object;
  /** More files beside them (tokenizer_config.json, generation_config.json, chat_template.jinja). */
  readonly extraFiles?: readonly { readonly name: string; readonly data: string }[];
}

/** The weights file of a checkpoint: the model, or a LoRA run's adapters. */
function weightsFileOf(adapter: boolean): string {
  return adapter ? 'adapter_model.safetensors' : 'model.safetensors';
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

/** A file of a checkpoint folder. Every file goes through the same atomic, fsynced write. */
export type CheckpointFile = AtomicFile;

/** Files a checkpoint must hold to be resumed from (others may be present). */
export const REQUIRED_CHECKPOINT_FILES = ['config.json', 'tokenizer.json', 'optimizer.safetensors', 'trainer_state.json'] as const;

/**
 * The files of a checkpoint, in the layout above.
 * @example checkpointFiles(content).map((f) => f.name) // ['config.json', 'model.safetensors', …]
 */
export function checkpointFiles(content: CheckpointContent): CheckpointFile[] {
  return [
    { name: 'config.json', data: `${JSON.stringify(content.hfConfig, null, 2)}\n` },
    (() => {
      const name = weightsFileOf(content.adapterConfig !== undefined);
      return { name, data: encodeSafetensors(toRecords(content.weights), { format: 'pt', step: String(content.step) }, name) };
    })(),
    ...(content.adapterConfig === undefined ? [] : [{ name: 'adapter_config.json', data: `${JSON.stringify(content.adapterConfig, null, 2)}\n` }]),
    ...(content.extraFiles ?? []),
    { name: 'tokenizer.json', data: JSON.stringify(content.tokenizerJson) },
    { name: 'optimizer.safetensors', data: encodeSafetensors(toRecords(content.optimizer), undefined, 'optimizer.safetensors') },
    { name: 'trainer_state.json', data: `${JSON.stringify({ step: content.step, ...content.state }, null, 2)}\n` },
  ];
}

/**
 * Writes checkpoint folder `checkpoints/step-NNNNNN` from `files` atomically (a temporary folder,
 * each file fsynced, one rename), then points `checkpoints/latest` at it (write-then-rename, fsynced).
 * A crash at any moment leaves every `step-*` folder complete and `latest` naming a complete one
 * (the new or the previous).
 * @example await writeCheckpoint('runs/babyai', 10, [...checkpointFiles(content), { name: 'generation_config.json', data: '{}' }]);
 */
export async function writeCheckpoint(runDir: string, step: number, files: readonly CheckpointFile[]): Promise<string> {
  const root = join(runDir, 'checkpoints');
  const name = checkpointName(step);
  // Leftovers of a writer killed mid-write (one writer per run folder: src/runtime/run-lock.ts).
  const leftovers = (await readdir(root).catch(() => [] as string[])).filter((e) => /^\.(tmp|old)-|^\.latest\.tmp-/.test(e));
  for (const entry of leftovers) await rm(join(root, entry), { recursive: true, force: true });
  const finalDir = await writeFolderAtomic(root, name, files);
  await writeFileAtomic(join(root, 'latest'), `${name}\n`, { beforeRename: () => faultPoint('checkpoint-latest-written') });
  return finalDir;
}

/**
 * Writes a checkpoint under `<runDir>/checkpoints/` and points `latest` at it.
 * @example const dir = await saveCheckpoint('runs/babyai', content);
 */
export async function saveCheckpoint(runDir: string, content: CheckpointContent): Promise<string> {
  return writeCheckpoint(runDir, content.step, checkpointFiles(content));
}

/** Why a checkpoint folder is not one resume can use, or null when it is complete. */
async function incompleteReason(dir: string, expectedStep?: number): Promise<string | null> {
  // The weights: the model's, or (a LoRA run) the adapters with their config.
  const adapter = await stat(join(dir, 'adapter_config.json')).then(
    (s) => s.isFile(),
    () => false,
  );
  for (const file of [...REQUIRED_CHECKPOINT_FILES, weightsFileOf(adapter)]) {
    const ok = await stat(join(dir, file)).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!ok) return `no ${file}`;
  }
  let state: unknown;
  try {
    state = JSON.parse(await readFile(join(dir, 'trainer_state.json'), 'utf8'));
  } catch (err) {
    return `trainer_state.json unreadable (${(err as Error).message})`;
  }
  const step = (state as { step?: unknown } | null)?.step;
  if (typeof step !== 'number') return "trainer_state.json has no numeric 'step'";
  if (expectedStep !== undefined && step !== expectedStep) return `trainer_state.json says step ${step}`;
  return null;
}

/** Where a run folder's checkpoint is, and whether `latest` had to be passed over to find it. */
export interface LocatedCheckpoint {
  readonly dir: string;
  /** Set when `latest` was missing, empty or named an incomplete folder: what was wrong and what was used instead. */
  readonly fallback: string | null;
}

/**
 * Finds the checkpoint of a run folder: the one `checkpoints/latest` names when it is complete,
 * else the newest complete `step-*` folder (saying why in `fallback`); a checkpoint folder given
 * directly is used as it is.
 * @example const { dir, fallback } = await locateCheckpoint('runs/babyai'); if (fallback) console.error(fallback);
 */
export async function locateCheckpoint(location: string): Promise<LocatedCheckpoint> {
  const direct = await stat(join(location, 'trainer_state.json')).then(
    () => true,
    () => false,
  );
  if (direct) return { dir: location, fallback: null };
  const root = join(location, 'checkpoints');
  const entries = await readdir(root).catch((err: unknown) => {
    throw new CheckpointError(location, 'neither a checkpoint folder (no trainer_state.json) nor a run folder with checkpoints/', { cause: err });
  });
  let problem: string;
  try {
    const latest = (await readFile(join(root, 'latest'), 'utf8')).trim();
    if (latest === '') problem = 'checkpoints/latest is empty';
    else if (!/^step-\d+$/.test(latest)) problem = `checkpoints/latest names ${JSON.stringify(latest.slice(0, 80))}, not a step-N folder`;
    else {
      const reason = await incompleteReason(join(root, latest), Number(latest.slice(5)));
      if (reason === null) return { dir: join(root, latest), fallback: null };
      problem = `checkpoints/latest names ${latest}, which is incomplete (${reason})`;
    }
  } catch (err) {
    problem = `checkpoints/latest cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  const steps = entries
    .filter((e) => /^step-\d+$/.test(e))
    .map((e) => ({ name: e, step: Number(e.slice(5)) }))
    .sort((a, b) => b.step - a.step);
  for (const candidate of steps) {
    if ((await incompleteReason(join(root, candidate.name), candidate.step)) === null) {
      return { dir: join(root, candidate.name), fallback: `${problem}; using ${candidate.name}, the newest complete checkpoint` };
    }
  }
  throw new CheckpointError(location, `${problem}, and no complete checkpoint folder is left under checkpoints/ (${steps.length} step-* folders checked)`);
}

/**
 * Resolves a checkpoint folder from a run folder or a checkpoint folder itself (see
 * {@link locateCheckpoint}); `onFallback` hears when `latest` had to be passed over.
 * @example await resolveCheckpointDir('runs/babyai') // 'runs/babyai/checkpoints/step-000060'
 */
export async function resolveCheckpointDir(location: string, options: { onFallback?: (message: string) => void } = {}): Promise<string> {
  const { dir, fallback } = await locateCheckpoint(location);
  if (fallback !== null) options.onFallback?.(fallback);
  return dir;
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
  const adapterConfig = await readFile(join(dir, 'adapter_config.json'), 'utf8').then(
    (text) => JSON.parse(text) as object,
    () => undefined,
  );
  const weightsPath = join(dir, weightsFileOf(adapterConfig !== undefined));
  const weights = fromRecords(await readSafetensors(weightsPath), weightsPath);
  const optimizer = fromRecords(
    await readSafetensors(join(dir, 'optimizer.safetensors')),
    join(dir, 'optimizer.safetensors'),
  );
  const step = state.step;
  if (typeof step !== 'number') throw new CheckpointError(join(dir, 'trainer_state.json'), "missing numeric 'step'");
  return { step, hfConfig, weights, tokenizerJson, optimizer, state, ...(adapterConfig === undefined ? {} : { adapterConfig }) };
}
