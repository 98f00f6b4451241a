import { describe, expect, it } from 'vitest';
import { csvField, csvFileName, seriesCsv } from '../../../src/ui/format/series-csv.js';

describe('seriesCsv', () => {
  it('writes one row per point in long form with full precision and empty gaps', () => {
    const csv = seriesCsv('loss/approxKl', [
      { run: 'a', points: [[1, 0], [2, -1.2548346361995755e-8]] },
      { run: 'b', points: [[1, null]] },
    ]);
    expect(csv).toBe('metric,run,step,value\r\nloss/approxKl,a,1,0\r\nloss/approxKl,a,2,-1.2548346361995755e-8\r\nloss/approxKl,b,1,\r\n');
  });

  it('adds the smoothed column when a series is smoothed', () => {
    const csv = seriesCsv('m', [{ run: 'a', points: [[1, 1], [2, 3]], smoothed: [[1, 1], [2, 2.5]] }]);
    expect(csv.split('\r\n')).toEqual(['metric,run,step,value,smoothed', 'm,a,1,1,1', 'm,a,2,3,2.5', '']);
  });

  it('quotes fields holding commas, quotes or line breaks', () => {
    expect(csvField('runs,a')).toBe('"runs,a"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('plain')).toBe('plain');
    expect(csvField(Number.NaN)).toBe('');
  });
});

describe('csvFileName', () => {
  it('turns a metric name into a safe file name', () => {
    expect(csvFileName('rollout/successRate')).toBe('rollout_successRate.csv');
    expect(csvFileName('byTurn/x y')).toBe('byTurn_x_y.csv');
  });
});
