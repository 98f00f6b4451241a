/**
 * A custom advantage estimator, registered from outside the library and trained with.
 * Run: node --import tsx examples/custom-estimator.ts [steps] [runsDir]
 *
 * "Median baseline": each trajectory's advantage is its reward minus the median reward of its
 * group (more robust to one lucky sample than GRPO's mean), scaled by `settings.scale`, placed on
 * every trained token. The settings are checked by the estimator's own zod schema when the config
 * is parsed, so `algorithm.settings.scale: -1` is an error naming that field.
 */
import { type AdvantageInput, type CustomEstimatorOptions, parseConfig, registerAdvantageEstimator, resolveConfig, trainRun, z } from 'turnwise';

const settings = z.object({ scale: z.number().positive().default(1) }).strict();

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

registerAdvantageEstimator({
  name: 'median-baseline',
  description: 'reward minus the group median, on every trained token',
  settings,
  estimate(input: AdvantageInput<CustomEstimatorOptions>, { scale }) {
    const T = input.seqLen ?? 1;
    const rows = input.groupIds.length;
    const mask = input.mask ?? new Float32Array(rows * T).fill(1);
    const rewardOf = (b: number) => input.rewards.subarray(b * T, (b + 1) * T).reduce((a, r) => a + r, 0);
    const byGroup = new Map<string, number[]>();
    for (let b = 0; b < rows; b++) {
      const g = input.groupIds[b] as string;
      byGroup.set(g, [...(byGroup.get(g) ?? []), rewardOf(b)]);
    }
    const advantages = new Float32Array(rows * T);
    for (let b = 0; b < rows; b++) {
      const a = scale * (rewardOf(b) - median(byGroup.get(input.groupIds[b] as string) ?? []));
      for (let t = 0; t < T; t++) advantages[b * T + t] = (mask[b * T + t] as number) * a;
    }
    return { advantages, returns: input.rewards.slice() };
  },
});

const steps = Number(process.argv[2] ?? 30);
const config = resolveConfig(
  parseConfig({
    run: { dir: process.argv[3] ?? 'runs', name: 'example-median-baseline' },
    env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
    algorithm: { name: 'median-baseline', settings: { scale: 1 }, tasksPerStep: 8, groupSize: 8 },
    train: { steps, evalEvery: steps, evalTasks: 128, checkpointEvery: 0 },
  }),
);
const result = await trainRun({ config, onEvent: (e) => e.type === 'eval' && console.log(`step ${e.step}: held-out success ${e.successRate.toFixed(3)}`) });
console.log(`${result.status} with algorithm ${config.algorithm.name}: ${result.runDir}`);
