/**
 * The local engine against what SkyRL tx recorded (test/fixtures/tinker-skyrl/): base and trained
 * log-probs, the two recorded optimizer steps replayed from the recorded initial adapter, and the
 * recorded per-token losses recomputed from the recorded log-probs.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdamParams, EngineDatum, EngineLossName } from '../../../src/engines/engine.js';
import { elementwiseLossValues, resolveLoss } from '../../../src/engines/local/losses.js';
import { LocalLoraBase } from '../../../src/engines/local/lora-base.js';
import { GRAD_NORM_METRIC, LocalLoraEngine } from '../../../src/engines/local/lora-engine.js';
import { readPeftAdapter } from '../../../src/engines/local/checkpoint-files.js';
import { adamParams, adamParamsFromWire, datumFromWire, forwardBackwardOutput, forwardBackwardRequest, forwardOutputFromWire, optimStepRequest } from '../../../src/engines/tinker/wire.js';

const fixture = (p: string) => new URL(`../../fixtures/tinker-skyrl/${p}`, import.meta.url).pathname;
const transcript: Array<{ request_body: unknown; response_body: unknown }> = readFileSync(fixture('transcript.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
const line = (n: number) => transcript[n - 1] as { request_body: unknown; response_body: unknown };
const recorded = JSON.parse(readFileSync(fixture('trained-logprobs.json'), 'utf8')) as {
  sequences: Array<{ model_input_tokens: number[]; target_tokens: number[]; logprobs: number[]; base_logprobs: number[] }>;
};

const data: EngineDatum[] = recorded.sequences.map((s) => ({ inputTokens: Int32Array.from(s.model_input_tokens), targetTokens: Int32Array.from(s.target_tokens), weights: new Float32Array(s.model_input_tokens.length).fill(1) }));
const fbData = (n: number) => {
  const body = forwardBackwardRequest.parse(line(n).request_body);
  return { data: body.forward_backward_input.data.map((d, i) => datumFromWire(d, `data[${i}]`)), loss: body.forward_backward_input.loss_fn as EngineLossName, config: body.forward_backward_input.loss_fn_config ?? undefined };
};
const adamOf = (n: number): AdamParams => adamParamsFromWire(adamParams.parse(optimStepRequest.parse(line(n).request_body).adam_params));
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((m, x, i) => Math.max(m, Math.abs(x - (b[i] as number))), 0);

let tied: LocalLoraBase;
let untied: LocalLoraBase;
beforeAll(async () => {
  tied = await LocalLoraBase.load(fixture('model'), { reduction: 'sequence-mean', sharedA: true, maxLoraRank: 8 });
  untied = await LocalLoraBase.load(fixture('model'), { reduction: 'sequence-mean', sharedA: false, maxLoraRank: 8 });
});
afterAll(() => {
  tied.close();
  untied.close();
});

/** Replays lines 16 (forward_backward) + 18 (optim_step), then 22 + 24 + 26, on a model started from the recorded initial adapter. */
async function replay(base: LocalLoraBase) {
  const engine = await LocalLoraEngine.create(base, { modelId: 'replay', rank: 8, initialAdapterFolder: fixture('sampler-adapter-init') });
  const first = fbData(16);
  await engine.forwardBackward(first.data, first.loss, first.config);
  const step1 = await engine.optimStep(adamOf(18));
  const afterStep1 = await engine.forward(data, 'cross_entropy');
  const is = fbData(22);
  const ppo = fbData(24);
  await engine.forwardBackward(is.data, is.loss, is.config);
  await engine.forwardBackward(ppo.data, ppo.loss, ppo.config);
  const step2 = await engine.optimStep(adamOf(26));
  const afterStep2 = await engine.forward(data, 'cross_entropy');
  const adapter = engine.adapterWeights();
  await engine.close();
  return { step1, step2, afterStep1, afterStep2, adapter };
}

describe('the local LoRA engine against SkyRL tx’s recording', () => {
  it('gives the base model’s recorded per-token logprobs within 1e-4 from a fresh adapter', async () => {
    const engine = await LocalLoraEngine.create(tied, { modelId: 'fresh', rank: 8, seed: 3 });
    const out = await engine.forward(data, 'cross_entropy');
    const base = await engine.baseLogprobs(data);
    await engine.close();
    recorded.sequences.forEach((s, i) => {
      expect(maxDiff(out.logprobs[i]!, s.base_logprobs)).toBeLessThan(1e-4);
      expect(maxDiff(base[i]!, s.base_logprobs)).toBeLessThan(1e-4);
    });
  });

  it('loads the adapter SkyRL saved (target_modules null) and reproduces its trained logprobs within 1e-4', async () => {
    const adapter = await readPeftAdapter(fixture('sampler-adapter'));
    expect(adapter.spec.targets).toEqual(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']);
    const engine = await LocalLoraEngine.create(tied, { modelId: 'trained', rank: 8, initialAdapterFolder: fixture('sampler-adapter') });
    const out = await engine.forward(data, 'cross_entropy');
    await engine.close();
    recorded.sequences.forEach((s, i) => {
      expect(maxDiff(out.logprobs[i]!, s.logprobs)).toBeLessThan(1e-4);
    });
  });

  it('replays the recorded steps to SkyRL’s adapter under sequence-mean with tied lora_A', async () => {
    const run = await replay(tied);
    expect(run.step1.metrics[GRAD_NORM_METRIC]).toBeCloseTo(5.440444469, 4);
    expect(run.step2.metrics[GRAD_NORM_METRIC]).toBeCloseTo(4.657454013, 4);
    const step1Recorded = forwardOutputFromWire(forwardBackwardOutput.parse(line(21).response_body));
    run.afterStep1.logprobs.forEach((lp, i) => {
      expect(maxDiff(lp, step1Recorded.logprobs[i]!)).toBeLessThan(1e-5);
    });
    const final = await readPeftAdapter(fixture('sampler-adapter'));
    let worst = 0;
    for (const [name, w] of final.weights) worst = Math.max(worst, maxDiff(run.adapter.get(name)!.data, w.data));
    const lpWorst = Math.max(...recorded.sequences.map((s, i) => maxDiff(run.afterStep2.logprobs[i]!, s.logprobs)));
    console.log(`tied lora_A: max |adapter - SkyRL| after step 2 = ${worst.toExponential(3)}, max |logprob - SkyRL| = ${lpWorst.toExponential(3)}`);
    expect(worst).toBeLessThan(1e-5);
    recorded.sequences.forEach((s, i) => {
      expect(maxDiff(run.afterStep2.logprobs[i]!, s.logprobs)).toBeLessThan(1e-5);
    });
  });

  it('drifts from SkyRL at the second step when each projection has its own lora_A (measured)', async () => {
    const run = await replay(untied);
    const step1Recorded = forwardOutputFromWire(forwardBackwardOutput.parse(line(21).response_body));
    // Step 1 starts from B = 0, so A gets no gradient: untied and tied agree there.
    run.afterStep1.logprobs.forEach((lp, i) => {
      expect(maxDiff(lp, step1Recorded.logprobs[i]!)).toBeLessThan(1e-5);
    });
    const drift = Math.max(...recorded.sequences.map((s, i) => maxDiff(run.afterStep2.logprobs[i]!, s.logprobs)));
    console.log(`untied lora_A: max |logprob - SkyRL| after step 2 = ${drift.toExponential(3)}`);
    expect(drift).toBeGreaterThan(1e-3);
  });

  it('recomputes every recorded per-token loss of the three losses within 1e-6 from the recorded logprobs', () => {
    for (const [request, result] of [
      [16, 17],
      [22, 23],
      [24, 25],
    ] as const) {
      const { data: batch, loss, config } = fbData(request);
      const out = forwardOutputFromWire(forwardBackwardOutput.parse(line(result).response_body));
      const resolved = resolveLoss(loss, config);
      batch.forEach((d, i) => {
      expect(maxDiff(elementwiseLossValues(resolved, out.logprobs[i]!, d), out.elementwiseLoss[i]!)).toBeLessThan(1e-6);
    });
    }
  });
});
