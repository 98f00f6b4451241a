/**
 * The pure turn logic every episode path shares: the training path's episode actor
 * (`episode.ts`, one effect call per reset, act and step) and the batched simulation path (`episode-flow.ts`,
 * one event per turn). What counts as success, failure or truncation, the per-turn seed, and the
 * error messages live here once, so the two paths cannot drift apart.
 */
import { EnvironmentError } from '../core/errors.js';
import type { Outcome, StepResult } from '../core/types.js';

/** The part of a step result the rules read. */
export type StepVerdict = Pick<StepResult, 'reward' | 'done' | 'success'>;

/**
 * Whether a finished step counts as solved: the environment's `success`, else a positive reward.
 * @example stepSucceeded({ reward: 1, done: true }) // true
 */
export function stepSucceeded(step: StepVerdict): boolean {
  return step.success ?? step.reward > 0;
}

/**
 * The rules applied after a reset or a step, in order: done and solved → success; done → failure;
 * `turnsTaken` reached the horizon → truncated; otherwise null (act again).
 * @example outcomeAfter({ reward: 0, done: false }, 20, 20) // 'truncated'
 */
export function outcomeAfter(lastStep: StepVerdict | null, turnsTaken: number, horizon: number): Outcome | null {
  if (lastStep?.done) return stepSucceeded(lastStep) ? 'success' : 'failure';
  return turnsTaken >= horizon ? 'truncated' : null;
}

/**
 * The environment name of a task id (`babyai_12` → `babyai`).
 * @example envNameOf('babyai_12') // 'babyai'
 */
export function envNameOf(taskId: string): string {
  return taskId.includes('_') ? taskId.slice(0, taskId.lastIndexOf('_')) : taskId;
}

/**
 * The text of an unknown thrown value.
 * @example messageOf(new Error('boom')) // 'boom'
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Error messages an episode ends with, by effect. */
export const episodeErrors = {
  /** @example episodeErrors.resetFailed('babyai', 3, new Error('x')) */
  resetFailed: (envName: string, taskIndex: number, error: unknown): string => new EnvironmentError(envName, `reset(${taskIndex}) failed: ${messageOf(error)}`).message,
  resetTimedOut: (envName: string, ms: number): string => new EnvironmentError(envName, `reset timed out after ${ms} ms`).message,
  actFailed: (error: unknown): string => `act failed: ${messageOf(error)}`,
  actTimedOut: (ms: number): string => `act timed out after ${ms} ms`,
  stepFailed: (envName: string, error: unknown): string => new EnvironmentError(envName, `step failed: ${messageOf(error)}`).message,
  stepTimedOut: (envName: string, ms: number): string => new EnvironmentError(envName, `step timed out after ${ms} ms`).message,
  aborted: (reason: string): string => `aborted: ${reason}`,
} as const;

/**
 * Mixes a per-episode seed and a turn index into a 31-bit per-turn seed (splitmix-style): the
 * sampling seed of turn `turn`, the same on every path and placement.
 * @example turnSeed(1234, 0) // a fixed integer in [0, 2^31)
 */
export function turnSeed(seed: number, turn: number): number {
  let x = (seed ^ Math.imul(turn + 1, 0x9e3779b1)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return (x ^ (x >>> 16)) & 0x7fffffff;
}
