/**
 * The `alarms` section: collapse detectors run after every training step on that step's metrics
 * (`src/runtime/alarms/detectors.ts`). Each has a documented threshold and an action: `warn` (a
 * run event, a CLI line, a marker on the dashboard's curves), `stop` (stop the run after this
 * step, with a checkpoint) or `lowerHorizon` (cap the horizon `lowerHorizonBy` turns below the one
 * in force, for the rest of the run). Every alarm is stored as a run event `alarm/<name>`.
 */
import { z } from 'zod';

const posInt = () => z.number().int().positive();
const action = () =>
  z
    .enum(['warn', 'stop', 'lowerHorizon'])
    .default('warn')
    .describe('warn: event + CLI line + dashboard marker; stop: also stop after this step with a checkpoint; lowerHorizon: also cap the horizon lowerHorizonBy turns lower.');
const enabled = () => z.boolean().default(true).describe('Run this detector.');

const entropyCollapseSchema = z
  .object({
    enabled: enabled(),
    window: posInt().default(3).describe('Steps in the rolling mean of rollout/tokenEntropy; the first window also sets the start value.'),
    ratio: z.number().min(0).max(1).default(0.1).describe('Fire when the rolling mean falls below ratio x the mean of the run\'s first window.'),
    below: z.number().min(0).nullable().default(null).describe('Also fire when the rolling mean falls below this many nats (null = off).'),
    action: action(),
  })
  .strict();

const rewardVarianceSchema = z
  .object({
    enabled: enabled(),
    window: posInt().default(3).describe('Steps in the rolling mean of the zero-variance group share.'),
    above: z.number().min(0).max(1).default(0.8).describe('Fire when the rolling share of groups with zero score variance (rollout/zeroVarianceGroups) reaches this.'),
    ignoreSolved: z.boolean().default(true).describe('Do not count groups in which every episode succeeded (mastery, not collapse).'),
    action: action(),
  })
  .strict();

const echoTrapSchema = z
  .object({
    enabled: enabled(),
    window: posInt().default(5).describe('Steps per window; the last window is compared with the one before it.'),
    similarityAbove: z.number().min(0).max(1).default(0.8).describe('Fire only when the last window\'s mean within-group action-sequence similarity (rollout/groupSimilarity) is at least this...'),
    minRise: z.number().min(0).default(0.05).describe('...and it rose by at least this over the previous window while the within-group score spread (rollout/groupRewardStd) fell.'),
    action: action(),
  })
  .strict();

const gradNormSpikeSchema = z
  .object({
    enabled: enabled(),
    window: posInt().default(10).describe('Previous steps whose median gradient norm is the reference (fires only once that many are logged).'),
    factor: z.number().gt(1).default(5).describe('Fire when optim/gradNorm exceeds factor x that median.'),
    action: action(),
  })
  .strict();

const klBlowUpSchema = z
  .object({
    enabled: enabled(),
    approxKlAbove: z.number().positive().nullable().default(0.1).describe('Fire when loss/approxKl (policy change within the step\'s update) exceeds this (null = off).'),
    klRefAbove: z.number().positive().nullable().default(0.5).describe('Fire when loss/klRef (KL to the reference, nats per token; only with klCoef > 0) exceeds this (null = off).'),
    action: action(),
  })
  .strict();

/** The alarms section. */
export const alarmsSchema = z
  .object({
    cooldown: z.number().int().min(0).default(10).describe('Steps after an alarm fires before the same alarm may fire again.'),
    lowerHorizonBy: posInt().default(2).describe('Turns the lowerHorizon action takes off the horizon in force (never below 1).'),
    entropyCollapse: entropyCollapseSchema.prefault({}).describe('Policy entropy collapse: rollout/tokenEntropy far below its start.'),
    rewardVariance: rewardVarianceSchema.prefault({}).describe('In-group reward-variance collapse: most groups give GRPO/RLOO no signal.'),
    echoTrap: echoTrapSchema.prefault({}).describe('Echo trap (RAGEN): samples of a group act ever more alike while their scores stop differing.'),
    gradNormSpike: gradNormSpikeSchema.prefault({}).describe('Gradient-norm spike against the recent median.'),
    klBlowUp: klBlowUpSchema.prefault({}).describe('KL blow-up: the update moved the policy too far, or it drifted from the reference.'),
  })
  .strict();

/** A parsed alarms section. */
export type AlarmsConfig = z.output<typeof alarmsSchema>;

/** The detector names, in config order. */
export const ALARM_NAMES = ['entropyCollapse', 'rewardVariance', 'echoTrap', 'gradNormSpike', 'klBlowUp'] as const;

/** One detector's name. */
export type AlarmName = (typeof ALARM_NAMES)[number];
