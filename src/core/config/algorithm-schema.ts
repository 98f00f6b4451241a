/**
 * The `algorithm` section of the config: a discriminated union on `name`, so each
 * estimator's options are typed (never a loose bag). Every
 * algorithm shares the rollout-group, PPO-loss, KL and optimizer fields; each adds its own
 * estimator options, and `ppo` its critic. A section without `name` is GRPO (the quickstart).
 */
import { z } from 'zod';

const posInt = () => z.number().int().positive();
const nonNegInt = () => z.number().int().min(0);
const creditField = () =>
  z
    .enum(['trajectory', 'turn'])
    .default('trajectory')
    .describe(
      "trajectory: one advantage per trajectory from its total score (verl); turn: per turn, the trajectory's return-to-go against the group's returns-to-go at the same turn index (episodes already ended count 0, so the baseline never depends on the trajectory's own length).",
    );
const gamma = () => z.number().min(0).max(1).default(1).describe('Discount per agent token (1 = undiscounted, as verl uses).');

/** Fields every algorithm has, in the order the error messages list them (after `name` and the group fields). */
export const groupFields = {
  groupSize: posInt().default(8).describe('Episodes sampled per task in one step (the GRPO/RLOO group).'),
  tasksPerStep: posInt().default(8).describe('Distinct tasks sampled per training step.'),
};

export const sharedFields = {
  lr: z.number().positive().default(0.001).describe('Adam learning rate (peak, when scheduled).'),
  beta1: z.number().min(0).lt(1).default(0.9).describe('Adam first-moment decay.'),
  beta2: z.number().min(0).lt(1).default(0.99).describe('Adam second-moment decay.'),
  clipRatio: z.number().positive().default(0.2).describe('PPO clip range epsilon on the importance ratio.'),
  klCoef: z.number().min(0).default(0).describe('Weight of the KL to the reference policy (0 = no reference model); the initial value when klTarget is set.'),
  entropyCoef: z.number().min(0).default(0).describe('Weight of the entropy bonus.'),
  gradClip: z.number().positive().nullable().default(1).describe('Clip the global gradient norm to this value (actor and critic separately); null = no clipping.'),
  epochs: posInt().default(1).describe("Passes over each step's batch (PPO epochs)."),
  miniBatches: posInt().default(1).describe('Optimizer updates per epoch; must divide the episodes per step.'),
  maxTokensPerMicroBatch: posInt().default(8192).describe('Token budget of one forward/backward micro-batch (gradient accumulation above it).'),
  microBatchMultiple: z
    .union([posInt(), z.literal('auto')], { error: "expected a positive integer or 'auto'" })
    .default('auto')
    .describe(
      "The micro-batches of a mini-batch are the fewest maxTokensPerMicroBatch allows, rounded up to a multiple of this, cut to equal estimated work, so that the gradient workers (train.dataParallel) finish together; never depends on their count. auto = 4 for turnwise's own model (1, 2 or 4 workers get equal shares), 1 for a pretrained model (model.from), which trains in the learner thread.",
    ),
  dropZeroAdvantage: z.boolean().default(true).describe('Skip trajectories whose advantages are all zero (uniform groups); never done with a critic.'),
  weightDecay: z.number().min(0).default(0).describe('AdamW decoupled weight decay (0 = plain Adam).'),
  lrSchedule: z.enum(['constant', 'cosine']).default('constant').describe('Learning-rate schedule after warm-up: constant, or cosine decay over train.steps.'),
  warmupSteps: nonNegInt().default(0).describe('Training steps of linear learning-rate warm-up.'),
  minLrRatio: z.number().min(0).max(1).default(0).describe('Floor of the cosine schedule, as a share of lr.'),
  dualClip: z.number().gt(1).nullable().default(null).describe('Dual-clip constant c > 1 bounding the loss of negative-advantage tokens (verl clip_ratio_c = 3); null = off.'),
  lossAgg: z
    .enum(['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'])
    .default('token-mean')
    .describe('How per-token losses are reduced (verl loss_agg_mode); a sequence is one trajectory.'),
  klEstimator: z.enum(['k1', 'k2', 'k3']).default('k3').describe('KL estimator: k1 = log-ratio, k2 = squared/2, k3 = low-variance (verl low_var_kl).'),
  klPlacement: z.enum(['loss', 'reward']).default('loss').describe('KL as a term of the actor loss, or as a per-token penalty in the reward.'),
  klTarget: z.number().positive().nullable().default(null).describe('Target KL per token of the adaptive coefficient controller; null = fixed klCoef.'),
  klHorizon: z.number().positive().default(10000).describe('Horizon (in samples) of the adaptive KL controller.'),
  policyLoss: z.string().default('ppo-clip').describe('Policy loss by registered name: ppo-clip (built in), or one added with registerPolicyLoss (learner thread only: train.dataParallel 1).'),
  policyLossSettings: z.record(z.string(), z.unknown()).default({}).describe("Settings of a registered policy loss, checked by that loss's own schema."),
};

const criticSchema = z
  .object({
    trunk: z.enum(['shared', 'separate']).default('shared').describe('Value head on the policy trunk (shared), or on a separate small transformer.'),
    lr: z.number().positive().default(0.001).describe('Critic learning rate (its own Adam).'),
    warmupSteps: nonNegInt().default(0).describe('Steps at the start during which only the critic trains (verl critic_warmup).'),
    valueClip: z.number().positive().nullable().default(0.5).describe('Clip range of new values around the pre-update values (verl cliprange_value); null = unclipped.'),
    valueCoef: z.number().min(0).default(0.5).describe('Weight of the value loss in the shared-trunk loss (a separate critic minimises its own loss).'),
    dModel: posInt().default(32).describe('Separate critic only: transformer width.'),
    nLayers: posInt().default(1).describe('Separate critic only: transformer blocks.'),
    nHeads: posInt().default(2).describe('Separate critic only: attention heads; must divide dModel.'),
    ffnHidden: posInt().default(86).describe('Separate critic only: SwiGLU hidden size.'),
  })
  .strict();

const grpoSchema = z
  .object({
    name: z.literal('grpo').default('grpo').describe('GRPO (Shao et al. 2024): group-normalised outcome advantages, no critic.'),
    ...groupFields,
    normalizeStd: z.boolean().default(true).describe('Divide group-relative advantages by the group standard deviation (false = Dr. GRPO).'),
    ...sharedFields,
    credit: creditField(),
  })
  .strict();

const rlooSchema = z
  .object({
    name: z.literal('rloo').describe('RLOO (Ahmadian et al. 2024): leave-one-out group baseline, no critic.'),
    ...groupFields,
    ...sharedFields,
    credit: creditField(),
  })
  .strict();

const reinforcePlusPlusSchema = z
  .object({
    name: z.literal('reinforce_pp').describe('REINFORCE++ (Hu 2025): discounted returns whitened over the batch, no critic.'),
    ...groupFields,
    gamma: gamma(),
    ...sharedFields,
  })
  .strict();

const reinforceSchema = z
  .object({
    name: z.literal('reinforce').describe('REINFORCE (Williams 1992) with a running mean-return baseline.'),
    ...groupFields,
    gamma: gamma(),
    baselineMomentum: z.number().min(0).max(1).default(0.9).describe('EMA weight of the old baseline per step.'),
    ...sharedFields,
  })
  .strict();

const ppoSchema = z
  .object({
    name: z.literal('ppo').describe('PPO (Schulman et al. 2017) with a critic and GAE over agent tokens.'),
    ...groupFields,
    gamma: gamma(),
    lambda: z.number().min(0).max(1).default(1).describe('GAE lambda (verl default 1).'),
    gaeLevel: z.enum(['token', 'turn']).default('token').describe('GAE steps per agent token, or per turn (one advantage per turn).'),
    whitenAdvantages: z.boolean().default(true).describe('Whiten GAE advantages over the batch (as verl does).'),
    critic: criticSchema.prefault({}).describe('The value function.'),
    ...sharedFields,
  })
  .strict();

/** The algorithm section: one option per algorithm, chosen by `name` (default grpo). */
export const algorithmSchema = z.discriminatedUnion('name', [grpoSchema, rlooSchema, reinforcePlusPlusSchema, reinforceSchema, ppoSchema]);

/** A parsed algorithm section. */
export type AlgorithmConfig = z.output<typeof algorithmSchema>;

/** The names of the built-in algorithms (the options of {@link algorithmSchema}). */
export const BUILT_IN_ALGORITHMS: readonly string[] = ['grpo', 'rloo', 'reinforce_pp', 'reinforce', 'ppo'];

/**
 * The section of an algorithm whose estimator a user registered (`registerAdvantageEstimator`):
 * the shared fields, and `settings` checked by the estimator's own schema.
 * @example customAlgorithmSchema('centered', z.object({ scale: z.number() }))
 */
export function customAlgorithmSchema(name: string, settings: z.ZodType | undefined) {
  return z
    .object({
      name: z.literal(name).describe('A registered advantage estimator.'),
      ...groupFields,
      settings: (settings ?? z.object({}).strict()).default({}).describe("The estimator's settings, checked by its own schema."),
      ...sharedFields,
    })
    .strict();
}

/** A parsed section of a user-registered algorithm. */
export type CustomAlgorithmConfig = Omit<z.output<ReturnType<typeof customAlgorithmSchema>>, 'name' | 'settings'> & { name: string; settings: unknown };
