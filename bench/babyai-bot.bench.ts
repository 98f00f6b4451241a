/**
 * `npm run bench -- babyai-bot [seeds] [--optimal-seeds N] [--nodes N]`: the BabyAI bot on the
 * first `seeds` test seeds (default 200) of each of the 40 levels — solved items, items solved
 * within the level's own horizon (`levels/horizons.ts`) and within AgentGym-RL's 20 turns, turn
 * counts (text actions) — and the true optimum (fewest text actions, breadth-first search over
 * the text-action graph from the true state, `solver/search.ts`) on the first `--optimal-seeds`
 * seeds (default 50) with a budget of `--nodes` states (default 5000) per item: where the search
 * finishes the optimum is exact, where it hits the budget the optimum is only known to be ≤ the
 * bot's count (and above the depth searched). One core, in-process.
 *
 * `--generator turnwise|minigrid` (default turnwise, on which the level horizons were measured):
 * Minigrid's worlds hold seeds no policy can win (GoToImpUnlock keys locked in, OpenDoorsOrder's
 * two-door orders), which show as unsolved.
 */
import { performance } from 'node:perf_hooks';
import { BabyAIBot } from '../src/envs/babyai/bot/bot.js';
import { playBot } from '../src/envs/babyai/bot/play.js';
import { BabyAIEnvironment } from '../src/envs/babyai/env.js';
import { BABYAI_LEVELS } from '../src/envs/babyai/levels/index.js';
import { searchTurns } from '../src/envs/babyai/solver/search.js';

const AGENTGYM_HORIZON = 20;
/** Turn cap of a bot episode: above every level horizon, so a failure is a real failure. */
const MAX_TURNS = 150;

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`babyai-bot: ${name} must be a non-negative integer, got ${args[at + 1]}`);
  return value;
}

export async function main(args: string[]): Promise<void> {
  const positional = args.filter((a, i) => !a.startsWith('--') && !(args[i - 1] ?? '').startsWith('--'));
  const seeds = Number(positional[0] ?? 200);
  if (!Number.isInteger(seeds) || seeds <= 0) throw new RangeError(`babyai-bot: seeds must be a positive integer, got ${positional[0]}`);
  const optimalSeeds = Math.min(option(args, '--optimal-seeds', 50), seeds);
  const nodes = option(args, '--nodes', 5000);
  const at = args.indexOf('--generator');
  const generator = at < 0 ? 'turnwise' : args[at + 1];
  if (generator !== 'turnwise' && generator !== 'minigrid') throw new RangeError(`babyai-bot: --generator must be turnwise or minigrid, got ${generator}`);
  const env = new BabyAIEnvironment({ settings: { generator } });
  const bot = new BabyAIBot();
  const byCategory = new Map<string, { n: number; solved: number; within: number; turns: number }>();
  const start = performance.now();
  let solvedAll = 0;
  let withinAll = 0;
  let searchTime = 0;
  console.log(`BabyAI bot (${generator} generator), test seeds 0..${seeds - 1} of each level (cap ${MAX_TURNS} turns); optimum on seeds 0..${optimalSeeds - 1}, ${nodes} states per search\n`);
  console.log('| # | level | category | horizon | solved | within horizon | within 20 | mean turns | max turns | optimum found | mean optimum | bot on those | loop fallbacks |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [li, level] of BABYAI_LEVELS.entries()) {
    const turns: number[] = [];
    let within = 0;
    let within20 = 0;
    let optN = 0;
    let optSum = 0;
    let botOnOpt = 0;
    const searchesBefore = bot.searches;
    for (let seed = 0; seed < seeds; seed++) {
      const index = li + 40 * seed;
      const e = playBot(env, index, MAX_TURNS, bot);
      if (e.success) {
        turns.push(e.turns);
        if (e.turns <= level.horizon) within++;
        if (e.turns <= AGENTGYM_HORIZON) within20++;
      }
      if (seed < optimalSeeds) {
        const t0 = performance.now();
        env.reset(index);
        const view = env.trueState();
        if (view === null) throw new Error('no episode after reset');
        const found = searchTurns(view.world, view.instruction, { maxNodes: nodes });
        searchTime += performance.now() - t0;
        if (found.status === 'solved') {
          optN++;
          optSum += found.actions.length;
          botOnOpt += e.turns;
        }
      }
    }
    solvedAll += turns.length;
    withinAll += within;
    const sum = turns.reduce((a, b) => a + b, 0);
    const mean = sum / Math.max(turns.length, 1);
    const c = byCategory.get(level.category) ?? { n: 0, solved: 0, within: 0, turns: 0 };
    byCategory.set(level.category, { n: c.n + seeds, solved: c.solved + turns.length, within: c.within + within, turns: c.turns + sum });
    const opt = optN === 0 ? '–' : (optSum / optN).toFixed(1);
    const botOn = optN === 0 ? '–' : (botOnOpt / optN).toFixed(1);
    console.log(
      `| ${li + 1} | ${level.name} | ${level.category} | ${level.horizon} | ${turns.length}/${seeds} | ${within}/${seeds} | ${within20}/${seeds} | ${mean.toFixed(1)} | ${Math.max(0, ...turns)} | ${optN}/${optimalSeeds} | ${opt} | ${botOn} | ${bot.searches - searchesBefore} |`,
    );
  }
  console.log('\n| category | items | solved | within level horizon | mean turns |');
  console.log('|---|---|---|---|---|');
  for (const [cat, c] of byCategory) {
    console.log(`| ${cat} | ${c.n} | ${((100 * c.solved) / c.n).toFixed(1)}% | ${((100 * c.within) / c.n).toFixed(1)}% | ${(c.turns / Math.max(c.solved, 1)).toFixed(1)} |`);
  }
  const total = seeds * BABYAI_LEVELS.length;
  console.log(`\nsolved ${solvedAll}/${total} (${((100 * solvedAll) / total).toFixed(2)}%), within the level horizon ${withinAll}/${total}`);
  console.log(`${total} bot episodes + ${optimalSeeds * BABYAI_LEVELS.length} optimum searches in ${((performance.now() - start) / 1000).toFixed(1)} s (searches ${(searchTime / 1000).toFixed(1)} s)`);
}
