/**
 * `npm run bench -- engine [STEPS]`: what the Tinker protocol costs, against the same model in
 * process. One "training step" of a GRPO run is replayed on both engines — the base's log-probs for
 * the KL (one sampling request per sequence), one forward_backward with the ppo loss, one
 * optim_step, one save for sampling, then one sampling request per episode — on the tiny Qwen3 of
 * test/fixtures/tinker-skyrl/model:
 *
 * - in process: `LocalLoraEngine` (no HTTP);
 * - over HTTP: `TinkerEngine` → `turnwise tinker serve` on the same folder in a child process.
 *
 * It prints, per step, the requests and bytes each route cost (the client's own counters) and the
 * wall time of each engine, so the protocol's share is their difference; then the sampling
 * throughput with 1,000 episodes asking at once (the client keeps 64 requests in flight) against
 * the in-process engine answering them one after another.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { EngineDatum, EngineSampleRequest, ModelEngine } from '../src/engines/engine.js';
import { LocalLoraEngine } from '../src/engines/local/lora-engine.js';
import { TinkerClient } from '../src/engines/tinker/client.js';
import { TinkerEngine } from '../src/engines/tinker/tinker-engine.js';
import { Rng } from '../src/core/rng.js';
import { selectBackend } from '../src/backend/select.js';

const FOLDER = 'test/fixtures/tinker-skyrl/model';
const SEQUENCES = 32; // 8 tasks x 4 samples
const SEQUENCE_LENGTH = 160;
const PROMPT = 96;
const REPLY = 24;
const CONCURRENT = 1_000;

/** A GRPO-like batch: a shared-looking prompt then a reply, weights on the reply only. */
function batch(rng: Rng): EngineDatum[] {
  return Array.from({ length: SEQUENCES }, () => {
    const tokens = Int32Array.from({ length: SEQUENCE_LENGTH + 1 }, () => 3 + rng.int(500));
    const n = SEQUENCE_LENGTH;
    const weights = new Float32Array(n);
    weights.fill(1, PROMPT);
    return {
      inputTokens: tokens.slice(0, n),
      targetTokens: tokens.slice(1),
      weights,
      samplingLogprobs: new Float32Array(n).fill(-6),
      advantages: new Float32Array(n).fill(rng.next() < 0.5 ? -0.5 : 0.5),
    };
  });
}

function prompts(rng: Rng, count: number, seed0: number): EngineSampleRequest[] {
  return Array.from({ length: count }, (_, i) => ({
    promptTokens: Int32Array.from({ length: PROMPT }, () => 3 + rng.int(500)),
    numSamples: 1,
    maxTokens: REPLY,
    temperature: 1,
    topP: 1,
    topK: -1,
    stopTokenIds: [],
    seed: seed0 + i,
  }));
}

/** One step of the run's learner and sampler on `engine`; returns its wall time in ms. */
async function step(engine: ModelEngine, rng: Rng, k: number): Promise<number> {
  const start = performance.now();
  const data = batch(rng);
  await engine.baseLogprobs(data);
  await engine.forwardBackward(data, 'ppo', { clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
  await engine.optimStep({ learningRate: 1e-4, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
  const weights = await engine.saveWeightsForSampler(`bench-${k}`);
  await engine.sample(weights, prompts(rng, SEQUENCES, k * 1000));
  return performance.now() - start;
}

async function startServer(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'tinker', 'serve', FOLDER, '--port', '0', '--backend', 'wasm', '--base-model-name', 'bench'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /tinker API at (http:\/\/\S+)\/api\/v1 /.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`turnwise tinker serve exited ${code}: ${out}`)));
  });
  return { url, stop: () => child.kill('SIGKILL') };
}

const fmt = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function main(args: string[]): Promise<void> {
  const steps = Number(args[0] ?? 3);
  await selectBackend('wasm');
  console.log(`engine bench: ${SEQUENCES} sequences of ${SEQUENCE_LENGTH} tokens per step (${SEQUENCE_LENGTH - PROMPT} trained), ${SEQUENCES} sampling requests of ${REPLY} tokens; model ${FOLDER}; ${steps} steps after one warm-up`);

  const local = await LocalLoraEngine.open(FOLDER, { rank: 8, seed: 1, name: 'bench' });
  const server = await startServer();
  const client = new TinkerClient({ url: server.url });
  const remote = await TinkerEngine.open(client, { baseModel: 'bench', lora: { rank: 8, seed: 1 } });
  try {
    const localMs: number[] = [];
    const remoteMs: number[] = [];
    for (let k = 0; k <= steps; k++) {
      const l = await step(local, Rng.fromSeed(k), k);
      const before = client.traffic();
      const r = await step(remote, Rng.fromSeed(k), k);
      if (k === 0) continue; // warm-up: JIT, first allocations
      localMs.push(l);
      remoteMs.push(r);
      if (k === steps) {
        const after = client.traffic();
        console.log('\nper step over HTTP (client counters, last step):');
        console.log('| route | requests | bytes sent | bytes received |\n|---|---|---|---|');
        let requests = 0;
        let sent = 0;
        let received = 0;
        for (const [route, t] of Object.entries(after)) {
          const b = before[route] ?? { requests: 0, bytesSent: 0, bytesReceived: 0 };
          const dr = t.requests - b.requests;
          if (dr === 0) continue;
          requests += dr;
          sent += t.bytesSent - b.bytesSent;
          received += t.bytesReceived - b.bytesReceived;
          console.log(`| ${route} | ${dr} | ${fmt(t.bytesSent - b.bytesSent)} | ${fmt(t.bytesReceived - b.bytesReceived)} |`);
        }
        console.log(`| all | ${requests} | ${fmt(sent)} | ${fmt(received)} |`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const lm = median(localMs);
    const rm = median(remoteMs);
    console.log(`\nstep wall time, median of ${steps}: in process ${fmt(lm)} ms, over HTTP ${fmt(rm)} ms; protocol share ${fmt(rm - lm)} ms (${fmt((100 * (rm - lm)) / rm, 1)} % of the HTTP step, ratio ${fmt(rm / lm, 2)}x)`);

    // Sampling throughput: 1,000 episodes ask at once.
    const rng = Rng.fromSeed(99);
    const requests = prompts(rng, CONCURRENT, 50_000);
    const weights = await remote.saveWeightsForSampler('bench-throughput');
    const t0 = performance.now();
    const results = await remote.sample(weights, requests);
    const remoteSec = (performance.now() - t0) / 1000;
    const remoteTokens = results.reduce((n, r) => n + (r.sequences[0]?.tokens.length ?? 0), 0);
    const localWeights = await local.saveWeightsForSampler('bench-throughput');
    const t1 = performance.now();
    let localTokens = 0;
    for (const request of requests.slice(0, 200)) localTokens += (await local.sample(localWeights, [request]))[0]?.sequences[0]?.tokens.length ?? 0;
    const localSec = (performance.now() - t1) / 1000;
    console.log(
      `\nsampling, ${CONCURRENT} concurrent episodes (${PROMPT}-token prompts, ${REPLY} new tokens): over HTTP ${fmt(remoteTokens / remoteSec)} generated tok/s (${fmt(CONCURRENT / remoteSec, 1)} requests/s, ${fmt(remoteSec, 1)} s); in process, one after another (200 of them): ${fmt(localTokens / localSec)} tok/s; ratio ${fmt(remoteTokens / remoteSec / (localTokens / localSec), 2)}x`,
    );
  } finally {
    await remote.close();
    await local.close();
    server.stop();
  }
}
