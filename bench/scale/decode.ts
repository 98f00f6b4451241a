/**
 * The decoding part of `npm run bench -- scale` (issues #20, #31): batched decode with the KV cache
 * at an LLM shape — SmolLM2-135M (random weights: 30 layers, d 576, 9 query / 3 key-value heads of
 * 64, ffn 1536, vocab 49152, tied) — at B = 1, 16 and 64, against PyTorch with the same shapes and
 * work, one thread each, interleaved over rounds (the PyTorch interpreter from `TORCH_PYTHON`, else
 * Debian's: bench/torch-python.ts). Goals (issue #31): every batch size at least 1.0x PyTorch 2.x,
 * B = 64 at least 1.2x. The measurement is `npm run bench -- llm`'s (bench/llm-work.ts: greedy
 * steps through `TransformerPolicy`, the sampler's own path; the decode steps alone).
 */
import { loadavg } from 'node:os';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { describeBackend, selectBackend } from '../../src/backend/select.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { decodeStepFlops, describePeak, peakShare } from '../flops.js';
import { decodeTiming, type Plan, SMOLLM2_135M, torchRound } from '../llm-work.js';
import { Rates, ratio } from '../samples.js';
import { describeTorch, torchPython } from '../torch-python.js';
import type { ScaleOptions, ScaleSection } from './section.js';

/**
 * Measures decode tok/s at each batch size on both sides.
 * @example print(await measure({ quick: false }));
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const load = loadavg()[0] ?? 0;
  const plan: Plan & { skipTraining: boolean } = options.quick
    ? { prefillTokens: 16, decodeRows: [1, 16, 64], decodeContext: 32, decodeSteps: 4, trainBatch: [1, 8], loraRank: 16, repeat: 1, trainRepeat: 1, skipTraining: true }
    : { prefillTokens: 16, decodeRows: [1, 16, 64], decodeContext: 64, decodeSteps: 16, trainBatch: [1, 8], loraRank: 16, repeat: 2, trainRepeat: 1, skipTraining: true };
  const rounds = options.quick ? 1 : 3;
  const info = await selectBackend('auto');
  nativeBlas().blas?.setThreads(1);
  const model = new TransformerModel(SMOLLM2_135M, Rng.fromSeed(0));
  const rng = Rng.fromSeed(11);
  const ours = plan.decodeRows.map(() => new Rates());
  const theirs = plan.decodeRows.map(() => new Rates());
  let torchNote = describeTorch(torchPython());
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [i, b] of plan.decodeRows.entries()) ours[i]?.add(b * plan.decodeSteps, await decodeTiming(model, b, plan, rng));
      const t = torchRound(plan, SMOLLM2_135M);
      if (typeof t === 'string') torchNote = t;
      else for (const [i, b] of plan.decodeRows.entries()) theirs[i]?.addRates(t.decode?.[String(b)], t.decodeCpu?.[String(b)]);
    }
  } finally {
    model.dispose();
  }
  const flops = (b: number) => decodeStepFlops(SMOLLM2_135M, b, plan.decodeContext + plan.decodeSteps / 2) / b;
  const rows: ScaleSection['rows'] = plan.decodeRows.map((b, i) => {
    const o = ours[i] as Rates;
    const t = theirs[i] as Rates;
    const goal = b === 64 ? ' (goal >= 1.2x)' : ' (goal >= 1.0x)';
    return [
      `decode B=${b}: turnwise / PyTorch tok/s`,
      `${o.describe('')} / ${t.describe('')}: ${ratio(o.best, t.best)} wall, ${ratio(o.bestCpu, t.bestCpu)} CPU${goal}; ${peakShare(o.bestCpu * flops(b)) || 'n/a'} / ${peakShare(t.bestCpu * flops(b)) || 'n/a'}`,
    ];
  });
  const last = plan.decodeRows.length - 1;
  rows.push(['decode B=64 / B=1', `turnwise ${ratio((ours[last] as Rates).best, (ours[0] as Rates).best)}, PyTorch ${ratio((theirs[last] as Rates).best, (theirs[0] as Rates).best)}`]);
  return {
    title: 'decode: SmolLM2-135M shape, KV cache, batched (B = 1, 16, 64)',
    rows,
    notes: [
      `${plan.decodeContext}-token contexts, ${plan.decodeSteps} greedy steps per row, best of ${plan.repeat} per round, ${rounds} interleaved round(s) (spread shown); random weights; 1 thread each side`,
      `${describeBackend(info)}; ${torchNote}; ${describePeak()} (shares of it from the per-CPU-second rates)`,
      `load average ${load.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`,
    ],
  };
}
