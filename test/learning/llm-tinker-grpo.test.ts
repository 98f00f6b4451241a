/**
 * The free-text LLM agent of `llm-lora-grpo.test.ts` (a stand-in instruct model pretrained on
 * random BabyAI play), trained with GRPO + LoRA through `model.engine: tinker` against
 * `turnwise tinker serve` in another process: sampling, the base's log-probs for the KL, the ppo
 * loss, AdamW and the sampler weights of each version all go over the Tinker HTTP API. It must
 * learn as the in-process run does: held-out success up by a clear margin, invalid actions rare.
 *
 * Differences from the in-process test, each forced by the engine: temperature 1 (the engine's
 * log-probs are of the untempered model), the KL in the reward (the engine's loss has no KL term),
 * and the server's LoRA scale (alpha 32: scale 4 at rank 8, where the in-process test uses 2). It is
 * shorter than the in-process test (12 steps and 64 held-out tasks, against 20 and 128) to fit CI's
 * budget over HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { selectBackend } from '../../src/backend/select.js';
import { chatTextOptionsOf } from '../../src/runtime/pretrained-stack.js';
import { buildStandinAgent } from '../../scripts/standin/agent.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { startTinkerServer, type TinkerServerProcess } from '../helpers/tinker-server.js';
import { evalInvalidRate } from './eval-invalid-rate.js';
import { learningSeed, reportFigures } from './figures.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-llm-tinker-'));
const folder = join(dir, 'standin-babyai');
let server: TinkerServerProcess;
afterAll(async () => {
  await server?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const HORIZON = 5;
const STEPS = 12;

const inputFor = (url: string): TurnwiseConfigInput => ({
  seed: learningSeed(7),
  run: { dir, name: 'llm-tinker-grpo' },
  env: { name: 'babyai', settings: { levels: ['GoToRedBallNoDists'] } },
  model: { from: folder, engine: 'tinker', tinker: { url, baseModel: 'standin', apiKeyEnv: null }, lora: { rank: 8 }, maxContext: 1024, backend: 'wasm' },
  context: { format: 'chat' },
  sampling: { temperature: 1, constrained: false, maxActionTokens: 32 },
  algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.001, klCoef: 0.1, klPlacement: 'reward' },
  horizon: { schedule: 'fixed', horizon: HORIZON },
  train: { steps: STEPS, evalEvery: STEPS, evalTasks: 64, checkpointEvery: 0 },
});

beforeAll(async () => {
  await selectBackend('wasm');
  const config = resolveConfig(parseConfig(inputFor('http://127.0.0.1:1')));
  await buildStandinAgent({ folder, seed: 1, env: config.env, chat: chatTextOptionsOf(config, config.model.maxContext), episodes: 400, turns: HORIZON });
  server = await startTinkerServer(folder, ['--base-model-name', 'standin']);
}, 900_000);

describe('GRPO with LoRA through model.engine: tinker against turnwise tinker serve (BabyAI GoToRedBallNoDists, fixed seed)', () => {
  it('raises held-out success by a clear margin with few invalid actions', async () => {
    const runDir = join(dir, 'run');
    const result = await trainRun({ config: resolveConfig(parseConfig(inputFor(server.url))), runDir });
    expect(result.status, result.error ?? '').toBe('finished');
    const [before, after] = result.evals;
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(STEPS);
    const invalidBefore = evalInvalidRate(runDir, 0);
    const invalidAfter = evalInvalidRate(runDir, STEPS);
    reportFigures('llm-tinker-grpo', {
      seed: inputFor(server.url).seed as number,
      before: before?.successRate ?? Number.NaN,
      after: after?.successRate ?? Number.NaN,
      invalidBefore,
      invalidAfter,
    });
    // Bounds from the measured spread (lr 0.001, 12 steps, 64 held-out tasks; the same runs in
    // process through LocalLoraEngine, which gives the HTTP run's figures exactly):
    //   seed 7 (this test): 0.469 -> 0.719, invalid 0.088 -> 0.176, identical under
    //     OPENBLAS_CORETYPE=Haswell and the default (SkylakeX) kernels: the engine's model runs on
    //     tfjs' wasm kernels, so the fixed-seed run does not move with the CPU's BLAS;
    //   TURNWISE_LEARNING_SEED=101: 0.516 -> 0.656, invalid 0.074 -> 0.119;
    //   TURNWISE_LEARNING_SEED=102: 0.453 -> 0.641, invalid 0.120 -> 0.159.
    // Gain 0.14-0.25, so at least 0.1; invalid after at most 0.18, so below 0.25. At temperature 1
    // (forced, see above) the format slips more often than the in-process test's 0.7, and the rate
    // rises a little as the policy sharpens; neither the KL at 0.3 (0.163) nor the invalid-action
    // penalty shaper (0.185) kept it lower in this budget.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.1);
    expect(invalidAfter).toBeLessThan(0.25);
  }, 1_800_000);
});
