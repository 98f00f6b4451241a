/**
 * Tokenizer training text for TextCraft: the instruction, then per random episode the first
 * observation and a mix of listed actions (random), the solver's actions (so that multiples and
 * long craft lines appear) and an occasional malformed one, with the observations they produce.
 * Deterministic in `seed`.
 */
import { Rng } from '../../core/rng.js';
import type { EnvironmentOptions } from '../environment.js';
import { createTextcraftCatalog } from './catalog.js';
import { TextCraftEnvironment } from './env.js';
import { defaultRecipeBook } from './recipe-book.js';
import { solveGoal } from './solver.js';

const TURNS_PER_EPISODE = 8;
const INVALID_SAMPLES = ['get planks', 'craft 1 stick using planks', 'get 1 planks', 'craft 1 crafting table using 4 planks', 'jump', 'inventory'];

/**
 * Random-play corpus over the train split of the selected depths.
 * @example textcraftCorpus(undefined, 10, 0).length > 10 // true
 */
export function textcraftCorpus(options: EnvironmentOptions | undefined, episodes: number, seed: number): string[] {
  const rng = Rng.fromSeed(seed).fork('textcraft/corpus');
  const tasks = createTextcraftCatalog(options).indices('train');
  const book = defaultRecipeBook();
  const env = new TextCraftEnvironment(options);
  const out: string[] = [env.instruction()];
  try {
    for (let e = 0; e < episodes && tasks.length > 0; e++) {
      const task = rng.pick(tasks);
      let obs = env.reset(task);
      out.push(obs.text);
      const plan = e % 2 === 0 ? solveGoal(book, env.goal()).plan : [];
      for (let t = 0; t < TURNS_PER_EPISODE; t++) {
        const listed = obs.availableActions ?? [];
        const roll = rng.next();
        const action = t < plan.length && roll < 0.5 ? (plan[t] as string) : roll < 0.1 || listed.length === 0 ? rng.pick(INVALID_SAMPLES) : rng.pick(listed);
        const text = `Thought:\nI will ${action}.\n\nAction:\n${action}`;
        out.push(text);
        const result = env.step(text);
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
