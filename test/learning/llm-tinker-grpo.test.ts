/**
 * The free-text LLM agent of `llm-lora-grpo.test.ts` (a stand-in instruct model pretrained on
 * random BabyAI play), trained with GRPO + LoRA through `model.engine: tinker` against
 * `turnwise tinker serve` in another process: sampling, the base's log-probs for the KL, the ppo
 * loss, AdamW and the sampler weights of each version all go over the Tinker HTTP API. It must
 * learn as the in-process run does: held-out success up by a clear margin, invalid actions rare.
 *
 * Differences from the in-process test, each forced by the engine: temperature 1 (the engine's
 * log-probs are of the untempered model), the KL in the reward (the engine's loss has no KL term),
 * and the server's LoRA scale (alpha 32, rank 8: scale 4, where the in-process test uses 2), hence
 * half the learning rate.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { selectBackend } from '../../src/models/backend/select.js';
import { chatTextOptionsOf } from '../../src/runtime/pretrained-stack.js';
import { buildStandinAgent } from '../../src/runtime/standin-agent.js';
import { trainRun } from '../../src/runtime/train-run.js';
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
    // BOUNDS
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.15);
    expect(invalidAfter).toBeLessThan(0.25);
  }, 1_800_000);
});
