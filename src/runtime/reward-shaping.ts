/**
 * The run's process-reward hook from its config (`reward.shaper` + `reward.settings`), as the
 * rollout options take it; every assembly that builds a `RolloutRunner` for training (in-process,
 * NATS episodes workers) uses this, so shaped rewards are the same wherever episodes run.
 */
import { type RewardShaping, rewardShaperRegistry, rewardShapingOf } from '../algorithms/reward-shapers.js';
import type { ResolvedConfig } from '../core/config.js';
import { LlmJudge, type LlmJudgeSettings, llmJudgeSettingsSchema } from '../policies/llm-judge.js';

// The LLM-as-judge shaper lives here: it needs the judge client (policies/), which the pure
// registry (algorithms/) may not import. Its settings schema makes a config without
// reward.settings.endpoint fail at parse time once this module is loaded (every training path loads it).
if (!rewardShaperRegistry.has('llm-judge')) {
  rewardShaperRegistry.register({
    name: 'llm-judge',
    description: 'Scores every turn with a model behind an OpenAI-compatible endpoint and a rubric (settings.endpoint required; cached, retried, bounded concurrency).',
    builtIn: true,
    settings: llmJudgeSettingsSchema,
    create: (settings) => {
      const judge = new LlmJudge(settings as LlmJudgeSettings);
      return ({ turn, previousTurns, taskId }) =>
        judge.score({ taskId, history: previousTurns.map((t) => ({ observation: t.observationText, action: t.actionText })), observation: turn.observationText, action: turn.actionText });
    },
  });
}

/**
 * `{ shaping }` when the config names a shaper, `{}` otherwise (spread into `RolloutOptions`).
 * @throws InvalidConfigError naming `reward.shaper` or `reward.settings.<key>`.
 * @example new RolloutRunner({ ...options, ...rolloutShapingOf(config) });
 */
export function rolloutShapingOf(config: Pick<ResolvedConfig, 'reward'>): { shaping?: RewardShaping } {
  const { shaper, settings } = config.reward;
  return shaper === null ? {} : { shaping: rewardShapingOf(shaper, settings as Record<string, unknown>) };
}
