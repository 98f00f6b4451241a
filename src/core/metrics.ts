/**
 * The metric vocabulary: every metric turnwise logs, with what it means. The table in
 * docs/metrics.md is generated from this object (`npm run docs`), so it is the single source of truth.
 * Names follow verl where one exists.
 */
export const METRICS = {
  'rollout/successRate': 'Share of this step\'s training episodes that ended in success.',
  'rollout/meanReward': 'Mean outcome reward of this step\'s training episodes.',
  'rollout/meanTurns': 'Mean number of agent turns per training episode.',
  'rollout/truncationRate': 'Share of training episodes cut at the horizon in force.',
  'rollout/lengthTruncationRate': "Share of training episodes truncated by length: the context had no room for another reply (the model's context, or context.chat.maxResponseTokens).",
  'rollout/errorRate': 'Share of training episodes that ended in an environment or policy error.',
  'rollout/invalidActionRate': 'Share of agent turns the environment flagged invalid or unparsable.',
  'rollout/repeatedActionRate': 'Share of agent turns whose action (trimmed, lower-cased) the same episode had already taken ("performs repeatedly").',
  'rollout/tokenEntropy': 'True policy entropy (nats) per freely chosen action token, averaged: the entropy of the distribution the sampler drew each token from (over the allowed actions\' tokens under constrained decoding, over the full vocabulary otherwise), temperature-scaled, before top-p. NaN when the policy reports none (text policies).',
  'rollout/tokenEntropyConstrained': 'rollout/tokenEntropy over the tokens decoded under a constraint only: entropy of the allowed-set distribution (NaN when no token was constrained).',
  'rollout/tokenEntropyFull': 'rollout/tokenEntropy over the tokens decoded without a constraint only: entropy over the full vocabulary (NaN when every token was constrained).',
  'rollout/actionEntropy': 'Per-turn action entropy (nats), averaged over turns: the sum of the conditional token entropies along the sampled action, an unbiased estimate of the entropy of the whole action by the chain rule (forced tokens add 0).',
  'rollout/actionSurprisal': 'Mean over agent turns of -log p(chosen action), summed over its freely chosen tokens (nats): the chosen action\'s surprisal, a noisier sampled estimate of rollout/actionEntropy (formerly rollout/turnEntropy).',
  'rollout/meanScore': 'Mean score the learner is credited with under reward.mode (outcome: last reward; sum: Σ turn rewards; outcome+shaped: last reward + Σ shaped).',
  'rollout/meanTurnRewardSum': 'Mean over training episodes of the sum of their per-step environment rewards.',
  'rollout/meanShapedReturn': 'Mean over training episodes of the sum of their shaped (process-reward hook) rewards. Only with reward.shaper.',
  'rollout/zeroVarianceGroups': 'Share of this step\'s groups (samples of one task) whose scores are all equal: groups that give GRPO/RLOO no signal.',
  'rollout/solvedGroups': 'Share of this step\'s groups in which every episode succeeded (zero variance from mastery, not collapse).',
  'rollout/groupRewardStd': 'Mean over groups of the population standard deviation of the scores within the group.',
  'rollout/groupSimilarity': 'Mean over groups of the mean pairwise similarity of their episodes\' action sequences, 1 - Levenshtein distance / longer length over actions (trimmed, lower-cased): 1 = every sample acted alike (echo trap).',
  'rollout/rewardStd': 'Standard deviation of this step\'s training episode rewards (0 = every episode scored alike).',
  'rollout/meanTurnsSuccess': 'Mean agent turns of this step\'s successful training episodes (NaN when none succeeded).',
  'rollout/meanTurnsFailed': 'Mean agent turns of this step\'s unsuccessful training episodes (failed, truncated or errored; NaN when all succeeded).',
  'horizon/current': 'Maximum agent turns per episode in force during this step.',
  'horizon/stage': 'Index of the horizon schedule stage in force.',
  'loss/policy': 'PPO-clip policy loss (verl: actor/pg_loss), token-mean over trained tokens.',
  'loss/clipFrac': 'Share of trained tokens whose ratio was clipped (verl: actor/pg_clipfrac).',
  'loss/approxKl': 'Mean (old logprob - new logprob) over trained tokens (verl: actor/ppo_kl).',
  'loss/klRef': 'k3 KL to the frozen reference policy, token-mean (verl: actor/kl_loss).',
  'loss/entropy': 'Mean entropy of the (masked) action distribution at trained tokens (verl: actor/entropy_loss).',
  'loss/total': 'Total loss minimised: policy + kl coefficient x klRef - entropy coefficient x entropy.',
  'loss/dualClipFrac': 'Share of trained tokens whose negative-advantage loss the dual clip bounded (verl: actor/pg_clipfrac_lower); 0 when dual clip is off.',
  'loss/value': 'Clipped value loss 0.5 x max((V - R)^2, (Vclip - R)^2), aggregated like the policy loss (verl: critic/vf_loss). Only with a critic.',
  'loss/valueClipFrac': 'Share of trained tokens where the clipped value branch was larger (verl: critic/vf_clipfrac). Only with a critic.',
  'critic/explainedVariance': 'Explained variance 1 - Var(R - V)/Var(R) of the pre-update values over trained tokens (verl: critic/vf_explained_var); NaN when the returns do not vary. Only with a critic.',
  'critic/valueMean': 'Mean pre-update value prediction over trained tokens (verl: critic/values/mean). Only with a critic.',
  'optim/gradNorm': 'Global gradient norm before clipping (verl: actor/grad_norm).',
  'optim/lr': 'Learning rate used this step (verl: actor/lr).',
  'optim/criticGradNorm': 'Critic global gradient norm before clipping (verl: critic/grad_norm). Only with a critic.',
  'optim/criticLr': 'Critic learning rate used this step (verl: critic/lr). Only with a critic.',
  'kl/coef': 'KL coefficient in force this step, fixed or adaptive (verl: actor/kl_coef, critic/kl_coeff); 0 when the KL term is off.',
  'kl/reward': 'Token-mean KL to the reference subtracted from the reward, before the coefficient (verl: critic/kl); 0 unless the KL is placed in the reward.',
  'advantage/mean': 'Mean advantage over trained tokens (verl: critic/advantages/mean).',
  'advantage/absMean': 'Mean absolute advantage over trained tokens (0 when every group was uniform).',
  'advantage/std': 'Standard deviation of the advantages over trained tokens.',
  'advantage/min': 'Smallest advantage over trained tokens (verl: critic/advantages/min).',
  'advantage/max': 'Largest advantage over trained tokens (verl: critic/advantages/max).',
  'return/mean': 'Mean return (value target) over trained tokens (verl: critic/returns/mean).',
  'return/std': 'Standard deviation of the returns over trained tokens.',
  'return/min': 'Smallest return over trained tokens (verl: critic/returns/min).',
  'return/max': 'Largest return over trained tokens (verl: critic/returns/max).',
  'policy/staleness': 'Mean (learner version - producing policy version) over trained tokens.',
  'policy/version': 'Weights version after this step\'s update.',
  'throughput/trainTokensPerSec': 'Tokens (prompt + action) processed per second by the training step.',
  'throughput/sampleTokensPerSec': 'Context + generated tokens processed per second by the sampler during rollout.',
  'throughput/episodesPerSec': 'Training episodes finished per second of rollout.',
  'time/rolloutSec': 'Wall time of this step\'s rollout phase.',
  'time/trainSec': 'Wall time of this step\'s training phase.',
  'offpolicy/isWeight': 'Token-mean of the truncated behaviour importance weight min(ratio, C) used by the off-policy correction. Only with offPolicy.correction tis or decoupled.',
  'offpolicy/truncFrac': 'Share of trained tokens whose behaviour importance weight exceeded the cap C. Only with offPolicy.correction tis or decoupled.',
  'async/stalenessMax': 'Largest (learner version - producing policy version) over this step\'s trained tokens (async modes); never above the bound η.',
  'async/stalenessMean': 'Mean (learner version - producing policy version) over this step\'s trained tokens (async modes).',
  'async/staleness/0': 'Trained tokens of this step produced by the learner\'s own version (staleness histogram bin 0; bins 1..η follow as async/staleness/<k>).',
  'async/rejectedStale': 'Trajectories rejected so far because a token exceeded the staleness bound (counted, never silently dropped; the count is in the checkpoint).',
  'async/learnerIdleRatio': 'Share of this step\'s wall time the learner waited for a full batch (async modes).',
  'async/samplerIdleRatio': 'Share of this step\'s wall time with no episode in flight, so samplers had nothing to do (async modes).',
  'async/admissionBlockedRatio': 'Share of this step\'s wall time new episodes were held back by the staleness bound or a finish-old weight update.',
  'throughput/trajectoriesPerSec': 'Training trajectories finished per second of wall time (async modes: over the whole step, generation overlapping training).',
  'throughput/tokensPerSec': 'Trained tokens (prompt + action) per second of wall time over the whole step (async modes).',
  'eval/successRate': 'Held-out (test split) success rate, sampled at the rollout temperature.',
  'eval/meanTurns': 'Mean agent turns per held-out episode.',
} as const;

export type MetricName = keyof typeof METRICS;

/**
 * Metric families: one metric per turn index `<k>` (from 0) or episode length `<n>`, logged for
 * every index a step's training episodes reached. Documented here once per family; build names
 * with {@link byTurnMetric} and {@link byLengthMetric}.
 */
export const METRIC_FAMILIES = {
  'byTurn/tokenEntropy/<k>': 'rollout/tokenEntropy over the tokens of turn k (0 = first turn) only.',
  'byTurn/invalidActionRate/<k>': 'Share of the turns k that the environment flagged invalid or unparsable.',
  'byTurn/repeatedActionRate/<k>': 'Share of the turns k whose action the same episode had already taken.',
  'byTurn/reached/<k>': 'Share of training episodes that took a turn k (1 at k = 0 unless an episode had no turn).',
  'episodeLength/<n>': 'Share of training episodes with exactly n turns: the distribution of episode lengths (n = 0 .. the longest).',
} as const;

/** The quantities logged per turn index. */
export type ByTurnQuantity = 'tokenEntropy' | 'invalidActionRate' | 'repeatedActionRate' | 'reached';

/**
 * Name of a per-turn-index metric.
 * @example byTurnMetric('tokenEntropy', 2) // 'byTurn/tokenEntropy/2'
 */
export function byTurnMetric(quantity: ByTurnQuantity, turnIndex: number): string {
  return `byTurn/${quantity}/${turnIndex}`;
}

/**
 * Name of an episode-length share.
 * @example byLengthMetric(4) // 'episodeLength/4'
 */
export function byLengthMetric(turns: number): string {
  return `episodeLength/${turns}`;
}

/**
 * Splits a family member's name into its family and index, or null for any other name.
 * @example parseFamilyMetric('byTurn/reached/3') // { family: 'byTurn/reached', index: 3 }
 */
export function parseFamilyMetric(name: string): { family: string; index: number } | null {
  const m = /^(byTurn\/[A-Za-z]+|episodeLength)\/(\d+)$/.exec(name);
  return m ? { family: m[1] as string, index: Number(m[2]) } : null;
}
