/**
 * A custom environment in ~40 lines, registered and trained with GRPO on the in-process runtime.
 * Run: node --import tsx examples/custom-env.ts [steps] [runsDir]
 *
 * "Door": the observation names a colour; the agent must open the door of that colour.
 */
import { type Environment, type EnvironmentSpec, type Observation, parseConfig, registerEnvironment, resolveConfig, type StepResult, trainRun } from 'turnwise';

const COLOURS = ['red', 'green', 'blue', 'yellow'];
const actions = COLOURS.map((c) => `open the ${c} door`);

class DoorEnv implements Environment {
  readonly name = 'door';
  private goal = 'red';
  instruction(): string {
    return 'Open the door whose colour you are told.';
  }
  reset(index: number): Observation {
    this.goal = COLOURS[index % COLOURS.length] as string;
    return { text: `The way out is the ${this.goal} door.`, availableActions: actions };
  }
  step(actionText: string): StepResult {
    const success = actionText.trim() === `open the ${this.goal} door`;
    return { observation: { text: success ? 'The door opens.' : 'Locked.', availableActions: actions }, reward: success ? 1 : 0, done: true, success };
  }
  close(): void {}
}

const spec: EnvironmentSpec = {
  name: 'door',
  description: 'Example: open the door of the named colour',
  create: () => new DoorEnv(),
  catalog: () => ({ indices: (split) => Array.from({ length: split === 'test' ? 64 : 1000 }, (_, i) => (split === 'test' ? i : 1000 + i)) }),
  corpus: () => COLOURS.flatMap((c) => [`The way out is the ${c} door.`, `open the ${c} door`]),
};
registerEnvironment(spec);

const steps = Number(process.argv[2] ?? 25);
const config = resolveConfig(
  parseConfig({
    run: { dir: process.argv[3] ?? 'runs', name: 'example-door' },
    env: { name: 'door', settings: {} },
    tokenizer: { vocabSize: 300 },
    algorithm: { lr: 0.001, entropyCoef: 0.01 },
    horizon: { schedule: 'fixed', horizon: 1 },
    train: { steps, evalEvery: steps, evalTasks: 64, checkpointEvery: 0 },
  }),
);
const result = await trainRun({ config, onEvent: (e) => e.type === 'eval' && console.log(`step ${e.step}: success ${e.successRate.toFixed(2)}`) });
console.log(`${result.status}: ${result.runDir}`);
