import { describe, expect, it } from 'vitest';
import { avgAtN, type EvalSample, evalMetrics, passAtN, summarizeEval } from '../../src/eval/metrics.js';
import { markdownReport } from '../../src/eval/report.js';

const s = (item: string, reward: number, outcome: EvalSample['outcome'], turns: number, category?: string): EvalSample =>
  category === undefined ? { item, reward, outcome, turns } : { item, reward, outcome, turns, category };

// 3 items x 2 samples, hand-scored:
//   a (GoTo):   0.9 success, 0 truncated      -> best 0.9 > 0 : pass
//   b (GoTo):   0 failure,   0 error          -> best 0       : no pass
//   c (Pickup): 0.5 success, 0.7 success      -> best 0.7     : pass
const samples: EvalSample[] = [
  s('babyai_1', 0.9, 'success', 2, 'GoTo'),
  s('babyai_1', 0, 'truncated', 5, 'GoTo'),
  s('babyai_2', 0, 'failure', 3, 'GoTo'),
  s('babyai_2', 0, 'error', 0, 'GoTo'),
  s('babyai_3', 0.5, 'success', 4, 'Pickup'),
  s('babyai_3', 0.7, 'success', 2, 'Pickup'),
];

describe('evaluation metrics (AgentGym-RL main_generation definitions)', () => {
  it('Avg@n is the mean score over every sample', () => {
    expect(avgAtN(samples)).toBeCloseTo((0.9 + 0 + 0 + 0 + 0.5 + 0.7) / 6, 12);
  });

  it('Pass@n is the share of items whose best sample scores > 0', () => {
    expect(passAtN(samples)).toBeCloseTo(2 / 3, 12);
    // One good sample among many is enough; all-zero items never pass.
    expect(passAtN([s('x', 0, 'failure', 1), s('x', 0, 'failure', 1), s('x', 0.1, 'success', 1)])).toBe(1);
    expect(passAtN([s('x', 0, 'failure', 1), s('y', 0, 'truncated', 5)])).toBe(0);
  });

  it('counts truncation by length apart from the horizon', () => {
    const m = evalMetrics([s('x', 0, 'length', 3), s('x', 0, 'truncated', 5), s('y', 1, 'success', 2), s('y', 0, 'length', 4)]);
    expect(m).toMatchObject({ lengthTruncationRate: 2 / 4, truncationRate: 1 / 4, successRate: 1 / 4 });
  });

  it('counts success, truncation and error shares and mean turns over samples', () => {
    const m = evalMetrics(samples);
    expect(m).toMatchObject({ items: 3, samples: 6, successRate: 3 / 6, truncationRate: 1 / 6, errorRate: 1 / 6 });
    expect(m.meanTurns).toBeCloseTo(16 / 6, 12);
  });

  it('is all zeros (no NaN) for no samples', () => {
    expect(evalMetrics([])).toEqual({ items: 0, samples: 0, avgAtN: 0, passAtN: 0, successRate: 0, meanTurns: 0, truncationRate: 0, lengthTruncationRate: 0, errorRate: 0 });
  });

  it('aggregates per category, sorted, with samples without a category counted only overall', () => {
    const summary = summarizeEval([...samples, s('babyai_9', 1, 'success', 1)]);
    expect(Object.keys(summary.perCategory)).toEqual(['GoTo', 'Pickup']);
    const goTo = summary.perCategory.GoTo!;
    expect(goTo.items).toBe(2);
    expect(goTo.avgAtN).toBeCloseTo(0.9 / 4, 12);
    expect(goTo.passAtN).toBe(0.5);
    const pickup = summary.perCategory.Pickup!;
    expect(pickup.avgAtN).toBeCloseTo(0.6, 12);
    expect(pickup.passAtN).toBe(1);
    expect(summary.overall.items).toBe(4);
    expect(summary.overall.passAtN).toBe(3 / 4);
  });

  it('renders one comparison table: a row per policy, a column per category', () => {
    const a = summarizeEval(samples);
    const b = summarizeEval(samples.filter((x) => x.category === 'GoTo'));
    const md = markdownReport({
      env: 'babyai',
      split: 'test',
      tasks: 3,
      samples: 2,
      seed: 1,
      horizon: 5,
      policies: [
        { name: 'trained', description: 'ckpt', summary: a, usage: null },
        { name: 'remote', description: 'http://x/v1 model m', summary: b, usage: { promptTokens: 120, completionTokens: 7, retries: 2 } },
      ],
    });
    const rows = md.split('\n').filter((l) => l.startsWith('| '));
    expect(rows[0]).toBe('| policy | GoTo Avg@2 / Pass@2 | Pickup Avg@2 / Pass@2 | Avg@2 | Pass@2 | success | mean turns | truncated | error | tokens in / out |');
    expect(rows[1]).toBe('| trained | 0.225 / 0.500 | 0.600 / 1.000 | 0.350 | 0.667 | 0.500 | 2.67 | 0.167 | 0.167 | – |');
    expect(rows[2]).toBe('| remote | 0.225 / 0.500 | – | 0.225 | 0.500 | 0.250 | 2.50 | 0.250 | 0.250 | 120 / 7 |');
    expect(md).toContain('- remote: http://x/v1 model m (2 retried requests)');
  });
});
