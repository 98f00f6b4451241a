/**
 * A process-reward hook (reward shaper) of your own, registered by name and trained on with
 * `reward.mode: outcome+shaped`; collapse alarms print as they fire.
 * Run: node --import tsx examples/process-reward.ts [steps] [runsDir]
 *
 * "goal-object": +bonus for a turn whose action names the goal's object (read from the restated
 * goal line of the observation), -bonus for repeating an action the episode already took.
 */
import { parseConfig, RunStore, registerRewardShaper, resolveConfig, trainRun, z } from 'turnwise';

registerRewardShaper({
  name: 'goal-object',
  description: '+bonus when the action names the goal object, -bonus for a repeated action',
  // Checked while the config is parsed: a mistake is named `reward.settings.bonus`.
  settings: z.object({ bonus: z.number().min(0).default(0.05) }).strict(),
  create:
    ({ bonus }) =>
    ({ turn, previousTurns }) => {
      const goal = /^Your goal: .*?(?:the|a) (\w+ \w+)/m.exec(turn.observationText)?.[1]; // e.g. "red ball"
      const action = turn.actionText.trim().toLowerCase();
      if (previousTurns.some((t) => t.actionText.trim().toLowerCase() === action)) return -bonus;
      return goal !== undefined && action.includes(goal) ? bonus : 0;
    },
});

const steps = Number(process.argv[2] ?? 20);
const config = resolveConfig(
  parseConfig({
    run: { dir: process.argv[3] ?? 'runs', name: 'example-process-reward' },
    env: { name: 'babyai', settings: { levels: ['GoToRedBall'], restateGoal: true } },
    tokenizer: { vocabSize: 320, corpusEpisodes: 60 },
    model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64 },
    algorithm: { tasksPerStep: 4, groupSize: 4 },
    reward: { mode: 'outcome+shaped', shaper: 'goal-object', settings: { bonus: 0.05 } },
    horizon: { schedule: 'fixed', horizon: 4 },
    train: { steps, evalEvery: steps, evalTasks: 32, checkpointEvery: 0 },
  }),
);
const result = await trainRun({
  config,
  onEvent: (e) => {
    if (e.type === 'step') console.log(`step ${e.step}: success ${e.metrics['rollout/successRate']?.toFixed(2)} shaped return ${e.metrics['rollout/meanShapedReturn']?.toFixed(3)}`);
    if (e.type === 'alarm') console.log(`alarm: ${e.message}`);
  },
});
const store = RunStore.open(result.runDir, { readonly: true });
const [episode] = store.episodes({ step: steps - 1, split: 'train', limit: 1 });
if (episode) console.log(`last step, ${episode.id}: shaped rewards per turn ${store.episodeTurns(episode.id).map((t) => t.shapedReward).join(', ')}`);
store.close();
console.log(`${result.status}: ${result.runDir}`);
