/**
 * Faults of a `model.engine: tinker` run against `turnwise tinker serve`, each compared with a
 * fault-free run of the same seed: every stored episode and turn (token ids, log-probs, masks,
 * texts, rewards, policy versions) and the final adapter, byte for byte.
 *
 * - turnwise killed with kill -9 between a forward_backward and its optim_step, then `--resume`;
 * - the server killed and restarted (same port, same checkpoints folder) while the trainer is frozen
 *   between those two calls: the run fails naming the call, and `--resume` finishes it;
 * - requests timing out: a proxy holds the first answer of each training and sampling route past
 *   the client's timeout, so the client retries with the same sequence id while the server has
 *   already done the work — nothing is applied twice.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { selectBackend } from '../../src/backend/select.js';
import { chatTextOptionsOf } from '../../src/runtime/pretrained-stack.js';
import { buildStandinAgent } from '../../scripts/standin/agent.js';
import { startDelayingProxy } from '../helpers/delaying-proxy.js';
import { spawnCli } from '../helpers/nats-run.js';
import { expectSameFinalWeights, expectSameStoredContent } from '../helpers/run-content.js';
import { startTinkerServer, type TinkerServerProcess } from '../helpers/tinker-server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-tinker-faults-'));
const folder = join(dir, 'standin');
const configPath = join(dir, 'config.yaml');
const STEPS = 3;
const EPISODES_PER_STEP = 4;
const procs: ChildProcess[] = [];
const servers: TinkerServerProcess[] = [];

const input: TurnwiseConfigInput = {
  seed: 3,
  run: { dir, name: 'tinker-faults' },
  env: { name: 'babyai', settings: { levels: ['GoToRedBallNoDists'] } },
  model: { from: folder, engine: 'tinker', tinker: { url: 'http://127.0.0.1:1', baseModel: 'standin', apiKeyEnv: null }, lora: { rank: 4 }, maxContext: 1024, backend: 'wasm' },
  context: { format: 'chat' },
  sampling: { temperature: 1, constrained: false, maxActionTokens: 16 },
  algorithm: { tasksPerStep: 2, groupSize: 2, lr: 0.001, klCoef: 0.05, klPlacement: 'reward', dropZeroAdvantage: false },
  horizon: { schedule: 'fixed', horizon: 3 },
  train: { steps: STEPS, evalEvery: 0, evalTasks: 4, checkpointEvery: 1 },
};

beforeAll(async () => {
  await selectBackend('wasm'); // the stand-in is pretrained in this process
  const config = resolveConfig(parseConfig(input));
  await buildStandinAgent({ folder, seed: 1, env: config.env, chat: chatTextOptionsOf(config, config.model.maxContext), episodes: 40, turns: 3, epochs: 1 });
  writeFileSync(configPath, JSON.stringify(input));
}, 600_000);

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const s of servers.splice(0)) await s.kill();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function server(args: readonly string[] = [], port = 0): Promise<TinkerServerProcess> {
  const s = await startTinkerServer(folder, ['--base-model-name', 'standin', ...args], port);
  servers.push(s);
  return s;
}

/** `turnwise train` (or `--resume`) as a child; resolves with its exit code. */
function train(args: readonly string[], env: Record<string, string> = {}) {
  return spawnCli(procs, ['train', ...args], env);
}

const trainArgs = (runDir: string, url: string, extra: readonly string[] = []) => [configPath, '--run-dir', runDir, '--set', `model.tinker.url=${url}`, ...extra];

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const reference = join(dir, 'reference');

describe('model.engine: tinker under faults (turnwise tinker serve)', () => {
  it('runs fault-free to the reference', async () => {
    const s = await server();
    const run = train(trainArgs(reference, s.url));
    expect(await run.exit, run.output()).toBe(0);
  }, 300_000);

  it('turnwise killed with kill -9 between forward_backward and optim_step resumes to the same episodes and adapter', async () => {
    const s = await server();
    const runDir = join(dir, 'killed');
    const killed = train(trainArgs(runDir, s.url), { TURNWISE_FAULT: 'engine-gradients-sent@2:kill' });
    await killed.waitFor(/fault point 'engine-gradients-sent' reached/);
    expect(await killed.exit).toBeNull(); // ended by SIGKILL
    const resumed = train(['--resume', runDir]);
    expect(await resumed.exit, resumed.output()).toBe(0);
    expectSameStoredContent(runDir, reference, STEPS * EPISODES_PER_STEP);
    await expectSameFinalWeights(runDir, reference);
  }, 300_000);

  it('a server killed and restarted mid-step fails the run naming the call, and --resume finishes it as a fault-free run', async () => {
    const port = await freePort();
    const checkpoints = join(dir, 'server-checkpoints');
    const first = await server(['--checkpoints-dir', checkpoints], port);
    const runDir = join(dir, 'restarted');
    const run = train(trainArgs(runDir, first.url), { TURNWISE_FAULT: 'engine-gradients-sent@2:stop' });
    await run.frozenAt('engine-gradients-sent');
    await first.kill();
    await server(['--checkpoints-dir', checkpoints], port);
    run.proc.kill('SIGCONT');
    const code = await run.exit;
    expect(code).not.toBe(0);
    expect(run.output()).toMatch(/optim_step/);
    const resumed = train(['--resume', runDir]);
    expect(await resumed.exit, resumed.output()).toBe(0);
    expectSameStoredContent(runDir, reference, STEPS * EPISODES_PER_STEP);
    await expectSameFinalWeights(runDir, reference);
  }, 300_000);

  it('requests that time out are retried with the same sequence id, applied once', async () => {
    const s = await server();
    const proxy = await startDelayingProxy(s.url, ['/forward_backward', '/optim_step', '/asample', '/retrieve_future'], 6_000);
    try {
      const runDir = join(dir, 'timeouts');
      const run = train(trainArgs(runDir, proxy.url, ['--set', 'model.tinker.requestTimeoutMs=2000', '--set', 'model.tinker.pollTimeoutMs=2000']));
      expect(await run.exit, run.output()).toBe(0);
      expect(proxy.held.sort()).toEqual(['/asample', '/forward_backward', '/optim_step', '/retrieve_future']);
      expectSameStoredContent(runDir, reference, STEPS * EPISODES_PER_STEP);
      await expectSameFinalWeights(runDir, reference);
    } finally {
      await proxy.close();
    }
  }, 300_000);
});
