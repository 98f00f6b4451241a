/**
 * Tokenizer corpus by random play, shared by the grid and word environments: the instruction, then
 * the observations and actions of random episodes (a random available action each turn, with an
 * occasional invalid one so that error observations appear too). Deterministic in `seed`.
 */
import { Rng } from '../core/rng.js';
import type { Environment } from './environment.js';
import type { RandomActionSource } from './random-action.js';

/** What {@link randomPlayCorpus} needs. */
export interface RandomPlayOptions {
  readonly env: Environment;
  /** Task indices to draw episodes from (usually the train split). */
  readonly tasks: readonly number[];
  readonly episodes: number;
  readonly seed: number;
  /** Strings the environment rejects, sent about one turn in ten. */
  readonly invalidSamples: readonly string[];
  readonly turnsPerEpisode?: number;
  /** Where no actions are listed (a free mode): a random valid-looking action, as text. */
  readonly randomAction?: RandomActionSource;
}

/**
 * Random-play text, synchronous environments only (all built-in ones are).
 * @example randomPlayCorpus({ env: new MazeEnvironment(), tasks: [0, 1], episodes: 4, seed: 0, invalidSamples: ['jump'] })
 */
export function randomPlayCorpus(options: RandomPlayOptions): string[] {
  const { env, tasks, episodes, invalidSamples } = options;
  const rng = Rng.fromSeed(options.seed).fork(`${env.name}/corpus`);
  const turns = options.turnsPerEpisode ?? 12;
  const out: string[] = [env.instruction()];
  try {
    for (let e = 0; e < episodes && tasks.length > 0; e++) {
      let obs = env.reset(rng.pick(tasks));
      if (obs instanceof Promise) throw new TypeError('randomPlayCorpus: environment must be synchronous');
      out.push(obs.text);
      const first = obs;
      for (let t = 0; t < turns; t++) {
        const actions = obs.availableActions ?? [];
        let reply: string;
        if (actions.length === 0 && options.randomAction !== undefined && rng.next() >= 0.1) {
          reply = options.randomAction({ observation: obs, first, rng, form: 'text' });
        } else {
          const action = rng.next() < 0.1 || actions.length === 0 ? rng.pick(invalidSamples) : rng.pick(actions);
          reply = `Thought:\nI will ${action}.\n\nAction:\n${action}`;
        }
        out.push(reply);
        const result = env.step(reply);
        if (result instanceof Promise) throw new TypeError('randomPlayCorpus: environment must be synchronous');
        obs = result.observation;
        out.push(obs.text);
        if (result.done) break;
      }
    }
  } finally {
    env.close();
  }
  return out;
}
