/**
 * The run folder: where a run's database, resolved config, tokenizer and checkpoints live.
 *
 * ```
 * runs/<name>/            run.db (SQLite, WAL), config.json (resolved config), tokenizer.json,
 *                         checkpoints/step-NNNNNN/…, checkpoints/latest
 * ```
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseConfig, type ResolvedConfig, resolveConfig, type TurnwiseConfig } from '../core/config.js';
import { writeFileAtomic } from '../core/atomic-file.js';
import { CheckpointError } from '../core/errors.js';

/**
 * A fresh folder for a new run: `<dir>/<name>`, or `<dir>/<name>-2`, `-3`, … when taken, so that
 * running the quickstart twice never overwrites (or silently resumes) the first run.
 * @example await freshRunDir('runs', 'babyai-grpo') // 'runs/babyai-grpo-2' if 'runs/babyai-grpo' exists
 */
export async function freshRunDir(dir: string, name: string): Promise<string> {
  let candidate = join(dir, name);
  for (let i = 2; existsSync(candidate); i++) candidate = join(dir, `${name}-${i}`);
  await mkdir(candidate, { recursive: true });
  return candidate;
}

/** Writes the resolved config (without derived values, which are recomputed) into the run folder, atomically. */
export async function saveRunConfig(runDir: string, config: ResolvedConfig): Promise<void> {
  const { derived: _derived, ...plain } = config;
  await writeFileAtomic(join(runDir, 'config.json'), `${JSON.stringify(plain, null, 2)}\n`);
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
  const parsed = parseConfig(raw, path);
  return resolveConfig(overrides ? overrides(parsed) : parsed);
}
