import { describe, expect, it } from 'vitest';
import { formatStep, formatTick, formatValue } from '../../../src/ui/format/numbers.js';

describe('formatTick', () => {
  it('writes tiny ticks as exponents instead of long runs of zeros', () => {
    expect(formatTick(4e-8)).toBe('4e-8');
    expect(formatTick(-1.2e-8)).toBe('-1.2e-8');
    expect(formatTick(-0.000000003)).toBe('-3e-9');
    expect(formatTick(0.0005)).toBe('5e-4');
  });

  it('removes binary noise from round ticks', () => {
    expect(formatTick(0.1 + 0.2)).toBe('0.3');
    expect(formatTick(0.15000000000000002)).toBe('0.15');
    expect(formatTick(1.2)).toBe('1.2');
    expect(formatTick(0.001)).toBe('0.001');
    expect(formatTick(1 / 12)).toBe('0.0833333'); // the one tick of a flat curve
  });

  it('keeps small integers and zero as they are, and shortens large ticks with k/M', () => {
    expect(formatTick(0)).toBe('0');
    expect(formatTick(-0)).toBe('0');
    expect(formatTick(3)).toBe('3');
    expect(formatTick(9000)).toBe('9000');
    expect(formatTick(54000)).toBe('54k');
    expect(formatTick(1_500_000)).toBe('1.5M');
    expect(formatTick(-20_000)).toBe('-20k');
  });
});

describe('formatValue', () => {
  it('prints integers without decimals (a step of 23 is "23", not "23.00")', () => {
    expect(formatValue(23)).toBe('23');
    expect(formatValue(0)).toBe('0');
    expect(formatValue(-4)).toBe('-4');
  });

  it('rounds to four significant digits and drops trailing zeros', () => {
    expect(formatValue(0.123456)).toBe('0.1235');
    expect(formatValue(0.5)).toBe('0.5');
    expect(formatValue(2.50001)).toBe('2.5');
    expect(formatValue(12345.6)).toBe('12346');
    expect(formatValue(0.123456, 2)).toBe('0.12');
  });

  it('writes tiny values as exponents and gaps as an em dash', () => {
    expect(formatValue(-1.2548346361995755e-8)).toBe('-1.255e-8');
    expect(formatValue(0.00042)).toBe('4.2e-4');
    expect(formatValue(null)).toBe('—');
    expect(formatValue(undefined)).toBe('—');
    expect(formatValue(Number.NaN)).toBe('—');
  });
});

describe('formatStep', () => {
  it('prints whole steps as integers and a fractional position with one decimal', () => {
    expect(formatStep(23)).toBe('23');
    expect(formatStep(23.000000000001)).toBe('23');
    expect(formatStep(2.5)).toBe('2.5');
    expect(formatStep(0)).toBe('0');
  });
});
