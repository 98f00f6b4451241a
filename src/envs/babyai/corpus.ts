/**
 * Tokenizer training text for BabyAI: the instruction plus the observations and action strings of
 * random episodes (random available actions, with an occasional invalid one so that error
 * observations appear too). Deterministic in `seed`.
 */
import { Rng } from '../../core/rng.js';
import type { EnvironmentOptions } from '../environment.js';
import { createBabyAICatalog } from './catalog.js';
import { BabyAIEnvironment } from './env.js';

const TURNS_PER_EPISODE = 12;
const INVALID_SAMPLES = ['pick up the key', 'go to red ball 9', 'jump', 'toggle', 'drop'];

/**
 * Random-play corpus.
 * @example babyaiCorpus(undefined, 10, 0).length > 10 // true
 */
export function babyaiCorpus(options: EnvironmentOptions | undefined, episodes: number, seed: number): string[] {
  const rng = Rng.fromSeed(seed).fork('babyai/corpus');
  const tasks = createBabyAICatalog(options).indices('train');
  const env = new BabyAIEnvironment(options);
  const out: string[] = [env.instruction()];
  try {
    for (let e = 0; e < episodes; e++) {
      let obs = env.reset(rng.pick(tasks));
      out.push(obs.text);
      for (let t = 0; t < TURNS_PER_EPISODE; t++) {
        const actions = obs.availableActions ?? [];
        const action = rng.next() < 0.1 || actions.length === 0 ? rng.pick(INVALID_SAMPLES) : rng.pick(actions);
        out.push(`Thought:\nI will ${action}.\n\nAction:\n${action}`);
        const result = env.step(`Thought:\nI will ${action}.\n\nAction:\n${action}`);
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
