/**
 * The decoding part of `npm run bench -- scale` (issue #20 part 3): batched decode with the KV cache
 * at an LLM shape — SmolLM2-135M (random weights: 30 layers, d 576, 9 query / 3 key-value heads of
 * 64, ffn 1536, vocab 49152, tied) — at B = 1, 16 and 64, against PyTorch with the same shapes and
 * work, one thread each. Goals: B = 64 at least 10x B = 1 (the weights are read once per step for
 * the whole batch), and B = 1 within 1.5x of PyTorch. The measurement is `npm run bench -- llm`'s
 * (bench/llm.bench.ts: greedy steps through `TransformerPolicy`, the sampler's own path; the decode
 * steps alone, the prefill subtracted).
 */
import { loadavg } from 'node:os';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/models/backend/native-blas.js';
import { describeBackend, selectBackend } from '../../src/models/backend/select.js';
import { TransformerModel } from '../../src/models/transformer.js';
import { decodeRate, type Plan, SMOLLM2_135M, torchFigures } from '../llm.bench.js';
import type { ScaleOptions, ScaleSection } from './section.js';

const rate = (x: number | undefined): string => (x === undefined ? 'n/a' : `${x.toFixed(x < 100 ? 1 : 0)} tok/s`);

/**
 * Measures decode tok/s at each batch size on both sides.
 * @example print(await measure({ quick: false }));
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const load = loadavg()[0] ?? 0;
  const plan: Plan & { skipTraining: boolean } = options.quick
    ? { prefillTokens: 16, decodeRows: [1, 16, 64], decodeContext: 32, decodeSteps: 4, trainBatch: [1, 8], loraRank: 16, repeat: 1, trainRepeat: 1, skipTraining: true }
    : { prefillTokens: 16, decodeRows: [1, 16, 64], decodeContext: 64, decodeSteps: 16, trainBatch: [1, 8], loraRank: 16, repeat: 2, trainRepeat: 1, skipTraining: true };
  const info = await selectBackend('auto');
  nativeBlas().blas?.setThreads(1);
  const model = new TransformerModel(SMOLLM2_135M, Rng.fromSeed(0));
  const rng = Rng.fromSeed(11);
  const ours: Record<number, number> = {};
  try {
    for (const rows of plan.decodeRows) ours[rows] = await decodeRate(model, rows, plan, rng);
  } finally {
    model.dispose();
  }
  const torch = torchFigures(plan);
  const theirs = typeof torch === 'string' ? undefined : torch.decode;
  const rows: ScaleSection['rows'] = plan.decodeRows.map((b) => {
    const t = theirs?.[String(b)];
    return [`decode B=${b}: turnwise / PyTorch`, `${rate(ours[b])} / ${rate(t)}${t === undefined ? '' : ` (${((ours[b] as number) / t).toFixed(2)}x)`}`];
  });
  const b1 = ours[1] as number;
  const b64 = ours[64] as number;
  const t1 = theirs?.['1'];
  rows.push(['decode B=64 / B=1, turnwise', `${(b64 / b1).toFixed(2)}x (goal >= 10x)${theirs?.['64'] && t1 ? `; PyTorch ${(theirs['64'] / t1).toFixed(2)}x` : ''}`]);
  rows.push(['decode B=1: PyTorch / turnwise', t1 === undefined ? 'n/a' : `${(t1 / b1).toFixed(2)}x (goal <= 1.5x)`]);
  return {
    title: 'decode: SmolLM2-135M shape, KV cache, batched (B = 1, 16, 64)',
    rows,
    notes: [
      `${plan.decodeContext}-token contexts, ${plan.decodeSteps} greedy steps per row, best of ${plan.repeat}; random weights; 1 thread each side`,
      `${describeBackend(info)}; ${typeof torch === 'string' ? torch : `PyTorch ${torch.torch}`}`,
      `load average ${load.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`,
    ],
  };
}
