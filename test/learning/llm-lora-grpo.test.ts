/**
 * A free-text LLM agent that learns from a "pretrained" start. No pretrained weights can be
 * downloaded here, so the setup pretrains a stand-in: a tiny Llama-family model with a ChatML
 * tokenizer, trained by next-token prediction on chat transcripts of *random* BabyAI play (valid
 * `Thought: … Action: …` replies, random listed actions) — an instruct model that knows the format
 * but not the task — saved as a Hugging Face folder. The run loads it with `model.from`, talks
 * through its chat template with free generation (no constrained decoding), and GRPO with LoRA
 * raises held-out success by a clear margin while the invalid-action rate stays low.
 *
 * Why GoToRedBallNoDists: its only object is the red ball, so the listed actions come from a fixed
 * set of six and a 0.26M-parameter model learns which are listed from random play in seconds (with
 * distractors it must copy object names from the list, which it does not learn in this budget);
 * random play succeeds about half the time within 5 turns, so GRPO's groups have signal, and the
 * skill to learn is "go to the ball when it is listed, else look around". Temperature 0.7 keeps the
 * tiny model's rare format slips rarer without changing its uniform choice among listed actions;
 * the KL to the base (adapters off) keeps the format while the policy moves.
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
import { RunStore } from '../../src/store/run-store.js';
import { learningSeed, reportFigures } from './figures.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-llm-learning-'));
const folder = join(dir, 'standin-babyai');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HORIZON = 5;
const STEPS = 20;

const input: TurnwiseConfigInput = {
  seed: learningSeed(7),
  run: { dir, name: 'llm-lora-grpo' },
  env: { name: 'babyai', settings: { levels: ['GoToRedBallNoDists'] } },
  model: { from: folder, lora: { rank: 8, alpha: 16, dropout: 0 }, maxContext: 1024, backend: 'wasm' },
  context: { format: 'chat' },
  sampling: { temperature: 0.7, constrained: false, maxActionTokens: 32 },
  algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.001, klCoef: 0.1, maxTokensPerMicroBatch: 8192 },
  horizon: { schedule: 'fixed', horizon: HORIZON },
  train: { steps: STEPS, evalEvery: STEPS, evalTasks: 128, checkpointEvery: 0 },
};

let standin: StandinReport;
beforeAll(async () => {
  await selectBackend('wasm');
  const config = resolveConfig(parseConfig(input));
  standin = await buildStandinAgent({ folder, seed: 1, env: config.env, chat: chatTextOptionsOf(config, config.model.maxContext), episodes: 400, turns: HORIZON });
}, 300_000);

/** Share of the turns of held-out episodes at `step` that the environment flagged invalid. */
function evalInvalidRate(runDir: string, step: number): number {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    let turns = 0;
    let invalid = 0;
    for (const episode of store.episodes({ split: 'test', step })) {
      for (const turn of store.episodeTurns(episode.id)) {
        turns++;
        if (turn.invalidAction) invalid++;
      }
    }
    return invalid / Math.max(1, turns);
  } finally {
    store.close();
  }
}

describe('GRPO with LoRA on a pretrained stand-in, free-text replies (BabyAI GoToRedBallNoDists, fixed seed)', () => {
  it('raises held-out success by a clear margin with few invalid actions', async () => {
    // The stand-in learned the format: its next-token loss fell well below the first epoch's.
    expect(standin.epochLosses.at(-1)).toBeLessThan((standin.epochLosses[0] as number) * 0.6);
    const runDir = join(dir, 'run');
    const result = await trainRun({ config: resolveConfig(parseConfig(input)), runDir });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(STEPS);
    const invalidBefore = evalInvalidRate(runDir, 0);
    const invalidAfter = evalInvalidRate(runDir, STEPS);
    console.log(`stand-in ${JSON.stringify(standin)}`);
    reportFigures('llm-lora-grpo', {
      seed: input.seed as number,
      before: before?.successRate ?? Number.NaN,
      after: after?.successRate ?? Number.NaN,
      invalidBefore,
      invalidAfter,
    });
    // Bounds from the spread study (docs/testing.md), success before → after (invalid before → after):
    //   seed 7 (this test), OpenBLAS Cooperlake (OpenBLAS's own pick on this machine; turnwise asks for Zen since issue 31): 0.453 → 0.727 (0.068 → 0.110),
    //     the figures CI's SkylakeX run gave too (invalid 0.1102, which failed the old bound < 0.1);
    //   seed 7, OPENBLAS_CORETYPE=Haswell: 0.438 → 0.750 (0.057 → 0.065);
    //   TURNWISE_LEARNING_SEED=101: 0.555 → 0.734 (0.073 → 0.138); 102: 0.469 → 0.773 (0.047 → 0.027);
    //   103: 0.492 → 0.742 (0.055 → 0.056).
    //   Since then (Zen kernels by default, the clipping norm summed in double), seed 7 in the
    //   clean-clone CI of d8d07bf: 0.398 → 0.703 (0.055 → 0.111), inside both bounds.
    // Gain 0.180–0.313, so at least 0.1; invalid after at most 0.138, so below 0.2 (each at least 0.05,
    // about one standard error of a success rate over 128 episodes, from the worst run). The wasm path
    // (TURNWISE_NATIVE_BLAS=off) was not measured: there the stand-in's pretraining alone outran the 300 s
    // hook limit on the loaded study machine.
    // `node --import tsx scripts/learning-spread.ts --tests llm-lora-grpo --kernels default,Haswell --seeds fixed`,
    // then `--kernels default --seeds 101,102,103`.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.1);
    expect(invalidAfter).toBeLessThan(0.2);
  }, 600_000);
});
