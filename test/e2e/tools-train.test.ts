/**
 * A run that acts through tools, end to end with the real runtime: a tool-calling stand-in (its
 * ChatML template takes tools) trains on Wordle with `guess(word)` declared as a tool
 * (`context.actions: tools`), every turn a call or an invalid reply answered with its error; then
 * `turnwise simulate --policy checkpoint:` plays the checkpoint through the same tool path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { parseToolCallText } from '../../src/core/tools.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { selectBackend } from '../../src/backend/select.js';
import { chatTextOptionsOf } from '../../src/runtime/pretrained-stack.js';
import { simulate } from '../../src/runtime/simulate/simulate.js';
import { buildStandinAgent } from '../../scripts/standin/agent.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';
import { registerWordleTools } from '../learning/wordle-tools-env.js';

registerWordleTools();
const dir = mkdtempSync(join(tmpdir(), 'turnwise-tools-train-'));
const folder = join(dir, 'standin');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const input: TurnwiseConfigInput = {
  seed: 3,
  run: { dir, name: 'tools' },
  env: { name: 'wordle_tools', settings: { answers: ['about', 'badly', 'candy', 'dealt'], maxGuesses: 2, candidates: 4 } },
  model: { from: folder, lora: { rank: 4, alpha: 8, dropout: 0 }, maxContext: 1024, backend: 'wasm' },
  context: { format: 'chat', actions: 'tools' },
  sampling: { temperature: 0.5, constrained: false, maxActionTokens: 40 },
  algorithm: { tasksPerStep: 2, groupSize: 4, lr: 0.003, klCoef: 0.05, maxTokensPerMicroBatch: 8192 },
  horizon: { schedule: 'fixed', horizon: 2 },
  train: { steps: 2, evalEvery: 0, evalTasks: 4, checkpointEvery: 2 },
};

beforeAll(async () => {
  await selectBackend('wasm');
  const config = resolveConfig(parseConfig(input));
  await buildStandinAgent({ folder, seed: 2, env: config.env, actions: 'tools', chat: chatTextOptionsOf(config, config.model.maxContext), episodes: 150, turns: 2 });
}, 300_000);

describe('a run that acts through tools', () => {
  it('trains on tool calls, then simulates the checkpoint through the same tool path', async () => {
    const infos: string[] = [];
    const runDir = join(dir, 'run');
    const result = await trainRun({ config: resolveConfig(parseConfig(input)), runDir, onEvent: (e) => e.type === 'info' && infos.push(e.message) });
    expect(result.status).toBe('finished');
    expect(infos).toContain('actions: tools (context.actions tools)');

    // Every recorded turn is a call sent as its canonical text, or an invalid reply; calls are Wordle guesses.
    const store = RunStore.open(runDir, { readonly: true });
    const turns = store.episodes({ split: 'train' }).flatMap((e) => store.episodeTurns(e.id));
    store.close();
    expect(turns.length).toBeGreaterThanOrEqual(8);
    for (const turn of turns) {
      const call = parseToolCallText(turn.actionText);
      if (!turn.invalidAction) expect(call.ok && call.call.name).toBe('guess');
    }
    expect(turns.some((t) => !t.invalidAction)).toBe(true);

    const report = await simulate({
      config: resolveConfig(parseConfig(input)),
      spec: getEnvironmentSpec('wordle_tools'),
      agents: 2,
      policy: { kind: 'checkpoint', location: runDir },
      budget: { turns: 6 },
      clock: systemClock,
    });
    expect(report.policy).toMatch(/actions: tools\)$/);
    expect(report.outcomes.error).toBe(0);
    expect(report.turns).toBeGreaterThanOrEqual(6);
  }, 600_000);
});
