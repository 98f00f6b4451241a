/**
 * The run folder: where a run's database, resolved config, tokenizer and checkpoints live.
 *
 * ```
 * runs/<name>/            run.db (SQLite, WAL), config.json (resolved config), tokenizer.json,
 *                         checkpoints/step-NNNNNN/…, checkpoints/latest,
 *                         writer.lock + writer.json (the one process writing it: ./run-lock.ts)
 * ```
 *
 * A folder holds one run. `train` claims it: a new run only in a folder that holds none (or with
 * `force`, which deletes the old run's files first), a resume only in one that does.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseConfig, type ResolvedConfig, recordedConfig, resolveConfig, type TurnwiseConfig } from '../core/config.js';
import { writeFileAtomic } from '../core/atomic-file.js';
import { CheckpointError, TurnwiseError } from '../core/errors.js';
import { acquireRunLock, RUN_LOCK_FILES, type RunLock } from './run-lock.js';

/**
 * A fresh folder for a new run: `<dir>/<name>`, or `<dir>/<name>-2`, `-3`, … when taken, so that
 * running the quickstart twice never overwrites (or silently resumes) the first run. The folder is
 * created with a plain `mkdir`, which fails when it exists, so two runs started at once get two folders.
 * @example await freshRunDir('runs', 'babyai-grpo') // 'runs/babyai-grpo-2' if 'runs/babyai-grpo' exists
 */
export async function freshRunDir(dir: string, name: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (let i = 1; ; i++) {
    const candidate = join(dir, i === 1 ? name : `${name}-${i}`);
    try {
      await mkdir(candidate);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/**
 * A run id no other run shares: the run name (as one NATS subject token) and 8 random hex digits.
 * Streams, subjects, buckets and trajectory ids carry it, so two runs of one name never mix.
 * @example newRunId('babyai-grpo') // 'babyai-grpo-3f9a0c1e'
 */
export function newRunId(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_')}-${randomBytes(4).toString('hex')}`;
}

/** What `force` deletes from a run folder before a new run starts there; anything else in it is left alone. */
export const START_OVER_REMOVES = ['run.db', 'run.db-wal', 'run.db-shm', 'config.json', 'tokenizer.json', 'checkpoints'] as const;

/**
 * A new run was asked for in a folder that already holds one.
 * @example catch (e) { if (e instanceof RunFolderExistsError) console.error(e.message); }
 */
export class RunFolderExistsError extends TurnwiseError {
  constructor(readonly runDir: string) {
    super(
      `run folder ${runDir} already holds a run; continue it with \`turnwise train --resume ${runDir}\`, ` +
        `or start over with --force (deletes its ${START_OVER_REMOVES.filter((f) => !f.includes('-')).join(', ')}; other files stay)`,
    );
  }
}

/** Whether a folder holds (part of) a run. */
function holdsRun(runDir: string): boolean {
  return ['run.db', 'config.json', 'checkpoints'].some((f) => existsSync(join(runDir, f)));
}

/**
 * Undoes the claim of a folder that never came to hold a run (the run was refused while opening:
 * a bad model folder, a model too large): the lock's files go, and the folder too when nothing
 * else is in it, so the next run of that name gets the name, not `<name>-2`. Call after releasing
 * the lock. A folder that holds a run, or anything of the user's, is left as it is.
 * @example await releaseUnusedRunFolder('runs/babyai-grpo');
 */
export async function releaseUnusedRunFolder(runDir: string): Promise<void> {
  if (holdsRun(runDir)) return;
  for (const file of RUN_LOCK_FILES) await rm(join(runDir, file), { force: true });
  await rmdir(runDir).catch(() => undefined); // not empty: the user's files stay
}

/** A run folder claimed for writing. */
export interface ClaimedRunFolder {
  readonly runDir: string;
  readonly resuming: boolean;
  readonly lock: RunLock;
}

/**
 * Claims the folder a run writes: `resumeDir` (an existing run), `runDir` (exactly this folder) or
 * a fresh `<run.dir>/<run.name>[-k]`. Takes the single-writer lock first, so `force` never deletes
 * under a live writer. Release `lock` when the run ends.
 * @example const { runDir, lock } = await claimRunFolder({ runDir: 'runs/x' }, { name: 'x', dir: 'runs' });
 */
export async function claimRunFolder(
  target: { readonly resumeDir?: string; readonly runDir?: string; readonly force?: boolean },
  run: { readonly name: string; readonly dir: string },
): Promise<ClaimedRunFolder> {
  const resuming = target.resumeDir !== undefined;
  const runDir = target.resumeDir ?? target.runDir ?? (await freshRunDir(run.dir, run.name));
  if (resuming && !existsSync(join(runDir, 'run.db'))) throw new CheckpointError(runDir, 'no run.db: not a turnwise run folder, nothing to resume');
  const lock = await acquireRunLock(runDir, resuming ? 'train --resume' : 'train');
  if (!resuming && holdsRun(runDir)) {
    if (target.force !== true) {
      lock.release();
      throw new RunFolderExistsError(runDir);
    }
    for (const file of START_OVER_REMOVES) await rm(join(runDir, file), { recursive: true, force: true });
  }
  return { runDir, resuming, lock };
}

/** Writes the resolved config (without derived values, which are recomputed) into the run folder, atomically. */
export async function saveRunConfig(runDir: string, config: ResolvedConfig): Promise<void> {
  await writeFileAtomic(join(runDir, 'config.json'), `${JSON.stringify(recordedConfig(config as TurnwiseConfig), null, 2)}\n`);
}

/**
 * Reads the config a run was started with, applying `overrides` (e.g. more steps to extend a run).
 * @example const config = await loadRunConfig('runs/babyai-grpo', { train: { steps: 120 } });
 */
export async function loadRunConfig(runDir: string, overrides?: (config: TurnwiseConfig) => TurnwiseConfig): Promise<ResolvedConfig> {
  const path = join(runDir, 'config.json');
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new CheckpointError(runDir, `no readable config.json: is this a turnwise run folder? (${(err as Error).message})`, { cause: err });
  }
  const parsed = parseConfig(raw, path, { resolved: true });
  return resolveConfig(overrides ? overrides(parsed) : parsed);
}
