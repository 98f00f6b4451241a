/**
 * A short BabyAI GRPO run whose environment is served by `turnwise env serve babyai` in another
 * process and reached over AgentGym's HTTP protocol: held-out success rises as in-process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-agentgym-e2e-'));
let child: ChildProcess | null = null;
let url = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'env', 'serve', 'babyai', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child?.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /serving babyai on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1] as string);
    });
    child?.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child?.once('exit', (code) => reject(new Error(`env serve exited with ${code}: ${out}`)));
  });
});

afterAll(() => {
  child?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('BabyAI served over HTTP by another process', () => {
  it('learns: held-out success rises well above the untrained policy within 10 steps', async () => {
    const config = resolveConfig(
      parseConfig({
        seed: 7,
        run: { dir, name: 'agentgym-e2e' },
        env: { name: 'agentgym', settings: { type: 'babyai', url, levels: ['GoToRedBall'], connections: 4, pipelining: 16 } }, // pipelined, as the bench's fast setting
        algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.001 },
        horizon: { schedule: 'fixed', horizon: 5 },
        train: { steps: 10, evalEvery: 10, evalTasks: 128, checkpointEvery: 0 },
      }),
    );
    const result = await trainRun({ config, runDir: join(dir, 'run') });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(10);
    // As in-process (test/learning/babyai-grpo.test.ts): about 0.4 untrained, 0.65+ trained.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.15);
  });
});
