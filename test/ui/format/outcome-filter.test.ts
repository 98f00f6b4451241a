import { describe, expect, it } from 'vitest';
import { emptyOutcomeReason, outcomeOptions } from '../../../src/ui/format/outcome-filter.js';

const babyai = { total: 12, success: 1, truncated: 11 };

describe('outcomeOptions', () => {
  it('offers only the outcomes the step has, with their counts', () => {
    expect(outcomeOptions(babyai, '')).toEqual([
      { value: '', label: 'any (12)', count: 12 },
      { value: 'success', label: 'success (1)', count: 1 },
      { value: 'truncated', label: 'truncated (11)', count: 11 },
    ]);
  });

  it('keeps a chosen outcome the step lacks, with count 0', () => {
    expect(outcomeOptions(babyai, 'failure').map((o) => o.label)).toEqual(['any (12)', 'success (1)', 'failure (0)', 'truncated (11)']);
  });
});

describe('emptyOutcomeReason', () => {
  it('explains an empty failure list by what the episodes did end with', () => {
    const reason = emptyOutcomeReason('failure', babyai, 'test', 3);
    expect(reason).toContain('No failure episodes at step 3 (test split)');
    expect(reason).toContain('ended success (1), truncated (11)');
    expect(reason).toContain('BabyAI');
  });

  it('says nothing when the list is not empty or no outcome is chosen', () => {
    expect(emptyOutcomeReason('truncated', babyai, 'test', 3)).toBeNull();
    expect(emptyOutcomeReason('', babyai, 'test', 3)).toBeNull();
  });

  it('names an empty step', () => {
    expect(emptyOutcomeReason('success', { total: 0 }, 'eval', 4)).toBe('No eval episodes at step 4.');
  });
});
