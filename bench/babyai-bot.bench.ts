/**
 * `npm run bench -- babyai-bot [seeds]`: the BabyAI bot on the first `seeds` test seeds (default
 * 200) of each of the 40 levels: solved items, items solved within AgentGym-RL's horizon of 20
 * turns, and turn counts (text actions; the bot's count is an upper bound on the optimum), with
 * a per-category summary. One core, in-process.
 */
import { performance } from 'node:perf_hooks';
import { BabyAIBot } from '../src/envs/babyai/bot/bot.js';
import { playBot } from '../src/envs/babyai/bot/play.js';
import { BabyAIEnvironment } from '../src/envs/babyai/env.js';
import { BABYAI_LEVELS } from '../src/envs/babyai/levels/index.js';

const HORIZON = 20;
const MAX_TURNS = 100;

export async function main(args: string[]): Promise<void> {
  const seeds = Number(args[0] ?? 200);
  if (!Number.isInteger(seeds) || seeds <= 0) throw new RangeError(`babyai-bot: seeds must be a positive integer, got ${args[0]}`);
  const env = new BabyAIEnvironment();
  const bot = new BabyAIBot();
  const byCategory = new Map<string, { n: number; solved: number; within: number; turns: number }>();
  const start = performance.now();
  let episodes = 0;
  console.log(`BabyAI bot, test seeds 0..${seeds - 1} of each level (horizon ${HORIZON}, cap ${MAX_TURNS} turns)\n`);
  console.log('| # | level | category | solved | within 20 turns | mean turns | median | max turns | mean primitive steps |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [li, level] of BABYAI_LEVELS.entries()) {
    const turns: number[] = [];
    let prim = 0;
    let within = 0;
    for (let seed = 0; seed < seeds; seed++) {
      const e = playBot(env, li + 40 * seed, MAX_TURNS, bot);
      episodes++;
      if (!e.success) continue;
      turns.push(e.turns);
      prim += e.primitiveSteps;
      if (e.turns <= HORIZON) within++;
    }
    turns.sort((a, b) => a - b);
    const mean = turns.reduce((a, b) => a + b, 0) / Math.max(turns.length, 1);
    const median = turns[Math.floor(turns.length / 2)] ?? 0;
    const c = byCategory.get(level.category) ?? { n: 0, solved: 0, within: 0, turns: 0 };
    byCategory.set(level.category, { n: c.n + seeds, solved: c.solved + turns.length, within: c.within + within, turns: c.turns + turns.reduce((a, b) => a + b, 0) });
    console.log(
      `| ${li + 1} | ${level.name} | ${level.category} | ${turns.length}/${seeds} | ${within}/${seeds} | ${mean.toFixed(1)} | ${median} | ${turns.at(-1) ?? 0} | ${(prim / Math.max(turns.length, 1)).toFixed(1)} |`,
    );
  }
  console.log('\n| category | items | solved | within 20 turns | mean turns |');
  console.log('|---|---|---|---|---|');
  for (const [cat, c] of byCategory) {
    console.log(`| ${cat} | ${c.n} | ${((100 * c.solved) / c.n).toFixed(1)}% | ${((100 * c.within) / c.n).toFixed(1)}% | ${(c.turns / Math.max(c.solved, 1)).toFixed(1)} |`);
  }
  console.log(`\n${episodes} episodes in ${((performance.now() - start) / 1000).toFixed(1)} s`);
}
