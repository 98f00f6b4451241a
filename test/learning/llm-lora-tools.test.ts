/**
 * A tool-calling LLM agent that learns with GRPO + LoRA from a "pretrained" start. As in
 * `llm-lora-grpo.test.ts`, no pretrained weights can be downloaded here, so the setup pretrains a
 * stand-in: a tiny Llama-family model whose ChatML template takes tools (Qwen2.5's `<tool_call>`
 * format), trained by next-token prediction on tool-call transcripts of random play — every reply
 * one valid call of `guess(word)`, the word drawn uniformly among the pool words the observation
 * lists — laid out as the run lays out tool contexts (the tools in the system message, each result a
 * tool message). It pretrains on the game with every word alike (`wordle_tools_uniform`), so it knows
 * how to call the tool, copies the one word still listed after a wrong guess about a third of the
 * time, and does not know which word is common. The run loads it with `model.from`, acts through
 * tools (`context.actions: tools`) on the game that favours the first word, and GRPO with LoRA
 * raises held-out success while invalid calls stay rare: it learns to open with the common word
 * and to copy the word a wrong first guess leaves.
 *
 * The game (`wordle-tools-env.ts`): Wordle over a pool of four words whose marks tell them apart,
 * two guesses, the first word the answer of 5 games in 8 (real Wordle favours common words).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { selectBackend } from '../../src/backend/select.js';
import { chatTextOptionsOf } from '../../src/runtime/pretrained-stack.js';
import { buildStandinAgent, type StandinReport } from '../../scripts/standin/agent.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { evalInvalidRate } from './eval-invalid-rate.js';
import { learningSeed, reportFigures } from './figures.js';
import { registerWordleTools } from './wordle-tools-env.js';

registerWordleTools();
const dir = mkdtempSync(join(tmpdir(), 'turnwise-llm-tools-'));
const folder = join(dir, 'standin-wordle-tools');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HORIZON = 2;
const STEPS = 40;

const input: TurnwiseConfigInput = {
  seed: learningSeed(7),
  run: { dir, name: 'llm-lora-tools' },
  env: { name: 'wordle_tools', settings: { answers: ['about', 'badly', 'candy', 'dealt'], maxGuesses: 2, candidates: 4 } },
  model: { from: folder, lora: { rank: 8, alpha: 16, dropout: 0 }, maxContext: 1024, backend: 'wasm' },
  context: { format: 'chat', actions: 'tools' },
  sampling: { temperature: 0.7, constrained: false, maxActionTokens: 40 },
  algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.003, klCoef: 0.02, maxTokensPerMicroBatch: 8192 },
  horizon: { schedule: 'fixed', horizon: HORIZON },
  train: { steps: STEPS, evalEvery: STEPS, evalTasks: 120, checkpointEvery: 0 },
};

let standin: StandinReport;
beforeAll(async () => {
  await selectBackend('wasm');
  const config = resolveConfig(parseConfig(input));
  standin = await buildStandinAgent({ folder, seed: 1, env: { ...config.env, name: 'wordle_tools_uniform' }, actions: 'tools', chat: chatTextOptionsOf(config, config.model.maxContext), episodes: 600, turns: HORIZON });
}, 600_000);

describe('GRPO with LoRA on a pretrained stand-in that calls tools (Wordle, guess(word), fixed seed)', () => {
  it('raises held-out success by a clear margin with few invalid calls', async () => {
    // The stand-in learned the call format: its next-token loss fell well below the first epoch's.
    expect(standin.epochLosses.at(-1)).toBeLessThan((standin.epochLosses[0] as number) * 0.6);
    const runDir = join(dir, 'run');
    const result = await trainRun({ config: resolveConfig(parseConfig(input)), runDir });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(STEPS);
    const invalidBefore = evalInvalidRate(runDir, 0);
    const invalidAfter = evalInvalidRate(runDir, STEPS);
    console.log(`stand-in ${JSON.stringify(standin)}; held-out success ${before?.successRate} -> ${after?.successRate}; invalid ${invalidBefore.toFixed(3)} -> ${invalidAfter.toFixed(3)}`);
    reportFigures('llm-lora-tools', { seed: input.seed as number, before: before?.successRate ?? Number.NaN, after: after?.successRate ?? Number.NaN, invalidAfter });
    // The bounds, from four runs of this test (2-core machine, shared): the fixed seed under the
    // default OpenBLAS kernel 0.600 -> 0.733 and under OPENBLAS_CORETYPE=Haswell 0.600 -> 0.708,
    // TURNWISE_LEARNING_SEED=101 0.542 -> 0.708 and =102 0.533 -> 0.725; invalid turns after at most
    // 0.009. The smallest rise was +0.108, so the bound is +0.08, about three of the 120 held-out
    // games below it; the invalid bound leaves room over the largest 0.009.
    // Since then (OpenBLAS's Zen kernels by default, global-norm clipping summed in double) the fixed
    // seed gives 0.517 -> 0.633, invalid 0.034 (clean-clone CI of d8d07bf): +0.117, inside both bounds.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.08);
    expect(invalidAfter).toBeLessThan(0.05);
    // About 160 s of CPU time; 22 minutes of wall time when four ran at once on 2 busy cores.
  }, 1_800_000);
});
