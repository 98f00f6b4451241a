/**
 * The metric vocabulary: every metric turnwise logs, with what it means. The README table is
 * generated from this object (`npm run docs:metrics`), so it is the single source of truth.
 * Names follow verl where one exists.
 */
export const METRICS = {
  'rollout/successRate': 'Share of this step\'s training episodes that ended in success.',
  'rollout/meanReward': 'Mean outcome reward of this step\'s training episodes.',
  'rollout/meanTurns': 'Mean number of agent turns per training episode.',
  'rollout/truncationRate': 'Share of training episodes cut at the horizon in force.',
  'rollout/errorRate': 'Share of training episodes that ended in an environment or policy error.',
  'rollout/invalidActionRate': 'Share of agent turns the environment flagged invalid or unparsable.',
  'horizon/current': 'Maximum agent turns per episode in force during this step.',
  'horizon/stage': 'Index of the horizon schedule stage in force.',
  'loss/policy': 'PPO-clip policy loss (verl: actor/pg_loss), token-mean over trained tokens.',
  'loss/clipFrac': 'Share of trained tokens whose ratio was clipped (verl: actor/pg_clipfrac).',
  'loss/approxKl': 'Mean (old logprob - new logprob) over trained tokens (verl: actor/ppo_kl).',
  'loss/klRef': 'k3 KL to the frozen reference policy, token-mean (verl: actor/kl_loss).',
  'loss/entropy': 'Mean entropy of the (masked) action distribution at trained tokens (verl: actor/entropy_loss).',
  'loss/total': 'Total loss minimised: policy + kl coefficient x klRef - entropy coefficient x entropy.',
  'optim/gradNorm': 'Global gradient norm before clipping (verl: actor/grad_norm).',
  'optim/lr': 'Learning rate used this step (verl: actor/lr).',
  'advantage/mean': 'Mean advantage over trained tokens.',
  'advantage/absMean': 'Mean absolute advantage over trained tokens (0 when every group was uniform).',
  'policy/staleness': 'Mean (learner version - producing policy version) over trained tokens.',
  'policy/version': 'Weights version after this step\'s update.',
  'throughput/trainTokensPerSec': 'Tokens (prompt + action) processed per second by the training step.',
  'throughput/sampleTokensPerSec': 'Context + generated tokens processed per second by the sampler during rollout.',
  'throughput/episodesPerSec': 'Training episodes finished per second of rollout.',
  'time/rolloutSec': 'Wall time of this step\'s rollout phase.',
  'time/trainSec': 'Wall time of this step\'s training phase.',
  'eval/successRate': 'Held-out (test split) success rate, sampled at the rollout temperature.',
  'eval/meanTurns': 'Mean agent turns per held-out episode.',
} as const;

export type MetricName = keyof typeof METRICS;
