import { describe, expect, it } from 'vitest';
import { TURNWISE_INTERRUPT_BUDGET, tuneV8Tiering } from '../../src/cli/v8-tiering.js';

describe('tuneV8Tiering', () => {
  it("sets turnwise's interrupt budget when the user named none", () => {
    expect(tuneV8Tiering(['--enable-source-maps'], '--max-old-space-size=4096')).toBe(`--interrupt-budget=${TURNWISE_INTERRUPT_BUDGET}`);
    expect(tuneV8Tiering([], undefined)).toBe(`--interrupt-budget=${TURNWISE_INTERRUPT_BUDGET}`);
  });

  it("leaves a budget the user gave on node's command line or in NODE_OPTIONS alone", () => {
    expect(tuneV8Tiering(['--interrupt-budget=5000'], undefined)).toBeNull();
    expect(tuneV8Tiering(['--interrupt_budget', '5000'], undefined)).toBeNull();
    expect(tuneV8Tiering([], '--enable-source-maps --interrupt-budget=90000')).toBeNull();
    // A longer flag that merely starts alike is not the budget.
    expect(tuneV8Tiering(['--interrupt-budget-for-maglev=100'], undefined)).toBe(`--interrupt-budget=${TURNWISE_INTERRUPT_BUDGET}`);
  });
});
