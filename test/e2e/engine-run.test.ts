/**
 * A `model.engine: tinker` run driven end to end with the in-process LoRA engine (no HTTP): the
 * asynchronous modes work on an engine, and the checkpoint a run downloads from its engine (PEFT
 * adapter files beside the base's tokenizer) is evaluated locally by `turnwise eval`'s code path,
 * reproducing the run's own last evaluation.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { LocalLoraEngine } from '../../src/engines/local/lora-engine.js';
import { selectBackend } from '../../src/backend/select.js';
import { resolveCheckpointDir } from '../../src/models/checkpoint.js';
import { evalRun } from '../../src/runtime/eval-run.js';
import { chatTextOptionsOf } from '../../src/runtime/pretrained-stack.js';
import { buildStandinAgent } from '../../scripts/standin/agent.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-engine-run-'));
const folder = join(dir, 'standin');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const input = (over: Partial<TurnwiseConfigInput>): TurnwiseConfigInput => ({
  seed: 5,
  run: { dir, name: 'engine-run' },
  env: { name: 'babyai', settings: { levels: ['GoToRedBallNoDists'] } },
  model: { from: folder, engine: 'tinker', tinker: { url: 'http://in-process.invalid', baseModel: 'standin', apiKeyEnv: null }, lora: { rank: 4 }, maxContext: 1024, backend: 'wasm' },
  context: { format: 'chat' },
  sampling: { temperature: 1, constrained: false, maxActionTokens: 16 },
  algorithm: { tasksPerStep: 2, groupSize: 2, lr: 0.001, dropZeroAdvantage: false },
  horizon: { schedule: 'fixed', horizon: 3 },
  train: { steps: 3, evalEvery: 3, evalTasks: 8, checkpointEvery: 3 },
  ...over,
});

/** The in-process LoRA engine as the run's engine factory. */
const inProcess = async (r: { baseModel: string; loraRank: number; seed: number; resumeFrom: string | null }) =>
  LocalLoraEngine.open(folder, { rank: r.loraRank, seed: r.seed, name: r.baseModel });

beforeAll(async () => {
  await selectBackend('wasm');
  const config = resolveConfig(parseConfig(input({})));
  await buildStandinAgent({ folder, seed: 1, env: config.env, chat: chatTextOptionsOf(config, config.model.maxContext), episodes: 40, turns: 3, epochs: 1 });
}, 600_000);

describe('a model.engine: tinker run on the in-process LoRA engine', () => {
  it('trains one step off the policy (mode one-step-off): the sampler runs one version behind, never more', async () => {
    const runDir = join(dir, 'one-step-off');
    const result = await trainRun({ config: resolveConfig(parseConfig(input({ mode: 'one-step-off' }))), runDir, engine: inProcess });
    expect(result.status, result.error ?? '').toBe('finished');
    const store = RunStore.open(runDir, { readonly: true });
    try {
      const staleness = store.metricsSeries('policy/staleness').map((p) => p.value);
      expect(staleness).toHaveLength(3);
      expect(Math.max(...staleness)).toBeLessThanOrEqual(1);
      expect(Math.max(...staleness)).toBeGreaterThan(0); // it did sample ahead of the learner
    } finally {
      store.close();
    }
  }, 600_000);

  it('writes a checkpoint with the PEFT adapter the engine saved, which eval loads on the local base and scores as the run did', async () => {
    const runDir = join(dir, 'sync');
    const result = await trainRun({ config: resolveConfig(parseConfig(input({}))), runDir, engine: inProcess });
    expect(result.status, result.error ?? '').toBe('finished');
    const checkpoint = await resolveCheckpointDir(runDir);
    const adapterConfig = JSON.parse(readFileSync(join(checkpoint, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(adapterConfig.r).toBe(4);
    expect(adapterConfig.lora_alpha).toBe(32); // the engine's alpha, not the config's
    expect(adapterConfig.target_modules).toEqual(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']);
    const state = JSON.parse(readFileSync(join(checkpoint, 'trainer_state.json'), 'utf8')) as { engine?: { statePath?: string } };
    expect(state.engine?.statePath).toMatch(/^tinker:\/\//);
    const last = result.evals.at(-1);
    const evaluated = await evalRun(runDir, { split: 'test', greedy: true });
    expect(evaluated.summary.episodes).toBe(8);
    // The same greedy episodes on the same weights, in tfjs both times (batch rounding aside).
    expect(Math.abs(evaluated.summary.successRate - (last?.successRate ?? -1))).toBeLessThanOrEqual(0.125);
  }, 600_000);
});
