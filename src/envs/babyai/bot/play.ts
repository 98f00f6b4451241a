/**
 * Plays one BabyAI task with the bot and reports how it went: what tests and the bot benchmark
 * measure (turns are text actions, the unit of AgentGym's horizon).
 */
import type { BabyAIEnvironment } from '../env.js';
import { BabyAIBot } from './bot.js';

/** Result of one bot episode. */
export interface BotEpisode {
  readonly success: boolean;
  /** Text actions taken (the episode's turns). */
  readonly turns: number;
  /** Primitive MiniGrid steps those turns expanded to. */
  readonly primitiveSteps: number;
}

/**
 * Runs the bot on task `index` for at most `maxTurns` turns.
 * @example playBot(new BabyAIEnvironment(), 41, 64) // { success: true, turns: 2, primitiveSteps: 5 }
 */
export function playBot(env: BabyAIEnvironment, index: number, maxTurns: number, bot = new BabyAIBot()): BotEpisode {
  env.reset(index);
  for (let t = 1; t <= maxTurns; t++) {
    const view = env.trueState();
    if (view === null) break;
    const r = env.step(bot.act(view));
    if (r.done) return { success: r.success === true, turns: t, primitiveSteps: Number(r.info?.stepCount ?? 0) };
  }
  return { success: false, turns: maxTurns, primitiveSteps: env.trueState()?.world.stepCount ?? 0 };
}
