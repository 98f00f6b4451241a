/**
 * What `turnwise train` will run, worked out from its arguments before anything starts: the config
 * (a YAML file with `--set` overrides, or a resumed run's own config), and warnings for flag
 * combinations that would silently do nothing. Pure apart from reading the config and the
 * checkpoint's step, so the rules are tested without training.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig, parseOverride, type ResolvedConfig, resolveConfig } from '../core/config.js';
import { resolveCheckpointDir } from '../models/checkpoint.js';
import { loadRunConfig } from '../runtime/run-folder.js';
// Registers the reward shapers (the LLM judge included) so that their settings are checked when the config is parsed.
import '../runtime/reward-shaping.js';
import { UsageError } from './exit-codes.js';

/** The train flags that decide the config. */
export interface TrainArgs {
  readonly configPath?: string;
  readonly resume?: string;
  readonly steps?: number;
  readonly runDir?: string;
  /** `--set key.path=value`, in order. */
  readonly set: readonly string[];
}

/** The config to run and what the user should know about the flags. */
export interface TrainPlan {
  readonly config: ResolvedConfig;
  /** Steps the resumed run had completed (0 for a new run). */
  readonly startStep: number;
  readonly warnings: readonly string[];
}

/**
 * Resolves the config of a `turnwise train` invocation.
 * @example const plan = await planTrain({ configPath: 'configs/babyai-grpo.yaml', set: ['train.steps=5'] });
 */
export async function planTrain(args: TrainArgs): Promise<TrainPlan> {
  if (args.resume === undefined) {
    if (args.configPath === undefined) throw new UsageError('give a config file (e.g. turnwise train configs/babyai-grpo.yaml) or --resume <runDir>');
    const overrides = args.set.map(parseOverride);
    const steps = args.steps !== undefined ? [parseOverride(`train.steps=${args.steps}`)] : [];
    return { config: resolveConfig(loadConfig(args.configPath, [...overrides, ...steps])), startStep: 0, warnings: [] };
  }
  if (args.set.length > 0) {
    throw new UsageError(`--set cannot change a resumed run (its config is fixed in ${join(args.resume, 'config.json')}); only --steps extends it. Start a new run to change the config.`);
  }
  if (args.runDir !== undefined) throw new UsageError('--run-dir and --resume both name the run folder; give one');
  const warnings: string[] = [];
  if (args.configPath !== undefined) {
    warnings.push(`the config file ${args.configPath} is not read: a resumed run keeps its own config (${join(args.resume, 'config.json')})`);
  }
  const startStep = await completedSteps(args.resume);
  const steps = args.steps;
  const config = await loadRunConfig(args.resume, (c) => (steps !== undefined ? { ...c, train: { ...c.train, steps } } : c));
  if (steps !== undefined && steps <= startStep) {
    warnings.push(`--steps ${steps} does nothing: the run has completed ${startStep} steps already (a run is never shortened; give more than ${startStep} to extend it)`);
  } else if (steps === undefined && config.train.steps <= startStep) {
    warnings.push(`the run has completed all its ${config.train.steps} steps: nothing to do (give --steps <n> with n > ${startStep} to extend it)`);
  }
  return { config, startStep, warnings };
}

/** Completed steps of a run folder's latest checkpoint (its trainer_state.json). */
async function completedSteps(runDir: string): Promise<number> {
  const dir = await resolveCheckpointDir(runDir);
  const state = JSON.parse(await readFile(join(dir, 'trainer_state.json'), 'utf8')) as { step?: unknown };
  return typeof state.step === 'number' ? state.step : 0;
}
