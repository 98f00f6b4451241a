/**
 * `npm run bench -- slice`: the vertical slice's speed figures, in one run.
 *
 * - training tokens/s of the default policy (d64, 2 layers) on a synthetic [32, 64] batch, all
 *   positions trained, and the same model in PyTorch (bench/torch_reference.py; the interpreter
 *   from `TORCH_PYTHON`, else Debian's python3-torch: bench/torch-python.ts) — with the ratio;
 * - sampling tokens/s on 64 real BabyAI contexts with constrained decoding: one batched call vs
 *   64 calls of one request — with the ratio;
 * - BabyAI environment steps/s (random valid actions).
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { Rng } from '../src/core/rng.js';
import { getEnvironmentSpec } from '../src/envs/registry.js';
import { tf } from '../src/backend/tf.js';
import { describeBackend, selectBackend } from '../src/backend/select.js';
import { buildContext, encodeActionChoices } from '../src/models/context.js';
import type { ActRequest } from '../src/core/policy.js';
import { trainBpe } from '../src/models/tokenizer/index.js';
import type { TrainBatch } from '../src/models/train-batch.js';
import { TransformerModel } from '../src/models/transformer/model.js';
import { TransformerPolicy } from '../src/models/transformer-policy.js';
import { describeTorch, torchEnv, torchPython } from './torch-python.js';

const SHAPE = { dModel: 64, nLayers: 2, nHeads: 4, ffnHidden: 172, vocab: 512, batch: 32, seq: 64 };

function timeFor(seconds: number, body: () => number): number {
  let units = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) units += body();
  return units / ((performance.now() - start) / 1000);
}

async function timeForAsync(seconds: number, body: () => Promise<number>): Promise<number> {
  let units = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) units += await body();
  return units / ((performance.now() - start) / 1000);
}

function envStepsPerSec(): number {
  const spec = getEnvironmentSpec('babyai');
  const env = spec.create({ settings: { levels: ['GoToRedBall'] } });
  const rng = Rng.fromSeed(3);
  let task = 1;
  let obs = env.reset(task) as { availableActions?: readonly string[] };
  return timeFor(1.5, () => {
    const actions = obs.availableActions ?? ['turn left'];
    const result = env.step(rng.pick(actions)) as { done: boolean; observation: { availableActions?: readonly string[] } };
    obs = result.observation;
    if (result.done) {
      task += 40;
      obs = env.reset(task) as { availableActions?: readonly string[] };
    }
    return 1;
  });
}

async function trainTokensPerSec(model: TransformerModel): Promise<number> {
  const { batch, seq, vocab } = SHAPE;
  const rng = Rng.fromSeed(5);
  const n = batch * seq;
  const inputIds = Int32Array.from({ length: n }, () => rng.int(vocab));
  const trainBatch: TrainBatch = {
    batchSize: batch,
    seqLen: seq,
    inputIds,
    attentionMask: new Uint8Array(n).fill(1),
    targetPositions: Int32Array.from({ length: n }, (_, i) => i),
    targetIds: Int32Array.from({ length: n }, () => rng.int(vocab)),
    allowedOffsets: null,
    allowedIds: null,
  };
  const adv = tf.tensor1d(Float32Array.from({ length: n }, () => rng.normal()));
  const old = tf.fill([n], -Math.log(vocab));
  const optimizer = tf.train.adam(1e-3, 0.9, 0.99);
  const step = () => {
    tf.tidy(() => {
      const vars = model.trainableVariables();
      const { grads } = tf.variableGrads(() => {
        const { logprobs, entropy } = model.forwardTrain(trainBatch, 1);
        entropy.dispose();
        const ratio = tf.exp(tf.sub(logprobs, old));
        const loss = tf.maximum(tf.neg(tf.mul(adv, ratio)), tf.neg(tf.mul(adv, tf.clipByValue(ratio, 0.8, 1.2))));
        return tf.mean(loss) as tf.Scalar;
      }, vars);
      optimizer.applyGradients(vars.map((v) => ({ name: v.name, tensor: grads[v.name] as tf.Tensor })));
    });
    return n;
  };
  step();
  const rate = timeFor(4, step);
  adv.dispose();
  old.dispose();
  optimizer.dispose();
  return rate;
}

function torchTokensPerSec(): { rate: number | null; note: string } {
  const torch = torchPython();
  if (torch.version === null) return { rate: null, note: describeTorch(torch) };
  const { dModel, nLayers, nHeads, ffnHidden, vocab, batch, seq } = SHAPE;
  const args = ['bench/torch_reference.py', '--d-model', dModel, '--layers', nLayers, '--heads', nHeads, '--ffn', ffnHidden, '--vocab', vocab, '--batch', batch, '--seq', seq, '--steps', 30, '--threads', 1].map(String);
  const run = spawnSync(torch.python, args, { encoding: 'utf8', env: torchEnv(1) });
  if (run.status !== 0) return { rate: null, note: `torch reference failed: ${run.stderr.slice(-300)}` };
  const parsed = JSON.parse(run.stdout.trim().split('\n').pop() as string) as { trainTokensPerSec: number };
  return { rate: parsed.trainTokensPerSec, note: `${describeTorch(torch)}, 1 thread` };
}

async function samplingRates(policy: TransformerPolicy, requests: ActRequest[]): Promise<{ batched: number; single: number }> {
  const options = { temperature: 1, topP: 1, maxNewTokens: 24 };
  const rng = Rng.fromSeed(9);
  const count = (results: { tokens: Int32Array }[], reqs: readonly ActRequest[]) =>
    reqs.reduce((sum, r, i) => sum + r.contextTokens.length + (results[i]?.tokens.length ?? 0), 0);
  const batched = await timeForAsync(3, async () => count(await policy.sampleActions(requests, options, rng), requests));
  let next = 0;
  const single = await timeForAsync(3, async () => {
    const request = requests[next++ % requests.length] as ActRequest;
    return count(await policy.sampleActions([request], options, rng), [request]);
  });
  return { batched, single };
}

export async function main(): Promise<void> {
  const backend = await selectBackend('auto');
  console.log(describeBackend(backend));
  const spec = getEnvironmentSpec('babyai');
  const settings = { levels: ['GoToRedBall'] };
  const tokenizer = trainBpe(spec.corpus({ settings }, 400, 1), { vocabSize: SHAPE.vocab });
  const model = new TransformerModel(
    { vocabSize: tokenizer.vocabSize, dModel: SHAPE.dModel, nLayers: SHAPE.nLayers, nHeads: SHAPE.nHeads, ffnHidden: SHAPE.ffnHidden, maxContext: 256, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false },
    Rng.fromSeed(1),
  );
  const policy = new TransformerPolicy(model, { endTokenId: tokenizer.specialId('end') });
  const env = spec.create({ settings });
  const requests: ActRequest[] = [];
  for (let i = 0; i < 64; i++) {
    const obs = env.reset(1 + 40 * (1000 + i)) as { text: string; availableActions?: readonly string[] };
    requests.push({
      contextTokens: buildContext(tokenizer, { instruction: env.instruction(), pastTurns: [], observationText: obs.text }, { history: 0, includeInstruction: false, maxContextTokens: 232 }),
      actionChoices: encodeActionChoices(tokenizer, obs.availableActions ?? []),
    });
  }
  const meanContext = requests.reduce((s, r) => s + r.contextTokens.length, 0) / requests.length;

  const steps = envStepsPerSec();
  const train = await trainTokensPerSec(model);
  const sampling = await samplingRates(policy, requests);
  const torch = torchTokensPerSec();

  console.log('\n| figure | value |');
  console.log('|---|---|');
  console.log(`| training tokens/s, turnwise (${backend.name}), d${SHAPE.dModel} L${SHAPE.nLayers}, batch [${SHAPE.batch}, ${SHAPE.seq}] | ${train.toFixed(0)} |`);
  console.log(`| training tokens/s, PyTorch reference, same shape | ${torch.rate === null ? torch.note : `${torch.rate.toFixed(0)} (${torch.note})`} |`);
  if (torch.rate !== null) console.log(`| ratio PyTorch / turnwise (training) | ${(torch.rate / train).toFixed(2)}x |`);
  console.log(`| sampling tokens/s, 64 requests batched (mean context ${meanContext.toFixed(0)} tokens) | ${sampling.batched.toFixed(0)} |`);
  console.log(`| sampling tokens/s, one request at a time | ${sampling.single.toFixed(0)} |`);
  console.log(`| ratio batched / one at a time | ${(sampling.batched / sampling.single).toFixed(2)}x |`);
  console.log(`| BabyAI env steps/s (GoToRedBall, random valid actions) | ${steps.toFixed(0)} |`);
  model.dispose();
}
