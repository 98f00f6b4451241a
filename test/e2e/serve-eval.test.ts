import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { evaluatePolicies } from '../../src/eval/harness.js';
import { checkpointSpec } from '../../src/runtime/policy-spec.js';
import { TEXT_POLICY_VERSION } from '../../src/policies/text-policy.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { serveModel } from '../../src/serve/server.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-serve-eval-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TASKS = 16;
const SAMPLES = 2;
const EPISODES = TASKS * SAMPLES;

describe('turnwise serve + turnwise eval', () => {
  it('scores a trained checkpoint the same directly and through the OpenAI-compatible server (real client, real server)', async () => {
    const config = resolveConfig(
      parseConfig({
        seed: 5,
        run: { dir, name: 'tiny' },
        env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
        algorithm: { tasksPerStep: 4, groupSize: 4 },
        horizon: { schedule: 'fixed', horizon: 5 },
        train: { steps: 3, evalEvery: 0, evalTasks: TASKS, checkpointEvery: 3 },
      }),
    );
    const runDir = join(dir, 'tiny');
    expect((await trainRun({ config, runDir })).status).toBe('finished');

    const server = await serveModel(runDir, { port: 0 });
    try {
      // Same episode seeds for both rows; the remote policy sends each turn's seed, and the server
      // samples that request from `Rng.fromSeed(seed)` at the run's temperature / top-p.
      const report = await evaluatePolicies({
        policies: [
          checkpointSpec(runDir, false, 'direct'),
          {
            kind: 'remote',
            name: 'served',
            config: { name: 'served', baseURL: server.baseURL, model: server.modelId, temperature: 1, topP: 1, maxTokens: config.sampling.maxActionTokens, concurrency: 8 },
          },
        ],
        split: 'test',
        tasks: TASKS,
        samples: SAMPLES,
        runDir: join(dir, 'eval'),
      });
      const [direct, served] = report.policies;
      expect(direct!.summary.overall.samples).toBe(EPISODES);
      expect(served!.summary.overall.samples).toBe(EPISODES);
      expect(served!.summary.overall.errorRate).toBe(0);

      // Tolerance: the contexts and per-request seeds are identical, so the draws are identical;
      // only float rounding can differ (the direct sampler batches up to 64 episodes per forward
      // pass, the server batches what arrives together), which can flip a sample whose uniform lies
      // within ~1e-6 of a CDF boundary. We allow 2 of 32 episodes to differ (measured: 0).
      const actions = (t: { turns: readonly { actionText: string }[] }) => t.turns.map((x) => x.actionText).join(' | ');
      const same = direct!.trajectories.filter((t, i) => actions(t) === actions(served!.trajectories[i]!)).length;
      expect(same).toBeGreaterThanOrEqual(EPISODES - 2);
      expect(Math.abs(served!.summary.overall.avgAtN - direct!.summary.overall.avgAtN)).toBeLessThanOrEqual(2 / EPISODES);
      expect(Math.abs(served!.summary.overall.passAtN - direct!.summary.overall.passAtN)).toBeLessThanOrEqual(2 / TASKS);
      expect(Object.keys(served!.summary.perCategory)).toEqual(Object.keys(direct!.summary.perCategory));

      // Token usage: one request per agent turn, counted by the client from the server's usage.
      const turns = served!.trajectories.reduce((n, t) => n + t.turns.length, 0);
      expect(served!.usage).toMatchObject({ requests: turns, retries: 0 });
      expect(served!.usage!.promptTokens).toBeGreaterThan(turns);
      expect(direct!.usage).toBeNull();

      // Stored like a run: one run per policy, episodes in split `eval`, text turns marked.
      const store = RunStore.open(join(dir, 'eval'), { readonly: true });
      expect(store.runs().map((r) => r.name)).toEqual(['direct', 'served']);
      store.useRun('served');
      const episodes = store.episodes({ split: 'eval' });
      expect(episodes).toHaveLength(EPISODES);
      const turn = store.episodeTurns(episodes[0]!.id)[0]!;
      expect(turn.policyVersion).toBe(TEXT_POLICY_VERSION);
      expect(turn.actionTokens).toHaveLength(0);
      expect(store.latestMetrics()['eval/avgAtN']?.value).toBeCloseTo(served!.summary.overall.avgAtN, 12);
      store.close();
      const md = readFileSync(join(dir, 'eval', 'eval.md'), 'utf8');
      expect(md).toMatch(/\| direct \|/);
      expect(md).toMatch(/\| served \|/);

      // Streaming through the official client gives the same text as a non-streamed call.
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'unused' });
      const messages = [
        { role: 'user' as const, content: 'Go to the red ball.' },
        { role: 'assistant' as const, content: 'OK.' },
        { role: 'user' as const, content: 'There is a red ball 1 2 steps in front of you.\nAvailable actions: ["turn left", "turn right", "go to red ball 1"]' },
      ];
      const whole = await client.chat.completions.create({ model: server.modelId, messages, seed: 3 });
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({ model: server.modelId, messages, seed: 3, stream: true })) {
        streamed += chunk.choices[0]?.delta?.content ?? '';
      }
      expect(streamed).toBe(whole.choices[0]?.message.content);
      await expect(client.chat.completions.create({ model: 'nope', messages })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      await server.close();
    }
  });
});
