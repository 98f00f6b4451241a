/**
 * Number formatting for axes, tooltips and tables, shared by the dashboard (src/ui/web) and
 * `turnwise plot`. Pure, no imports. Why our own: ECharts' defaults print a step of 23 as "23.00"
 * in tooltips and a tick of 4e-8 as "0.00000004"; these print "23" and "4e-8".
 */

/**
 * Significant digits a tick keeps: enough for round ticks (0.30000000000000004 → 0.3), few enough
 * that a flat curve's single tick (0.0833333333333) stays short.
 */
const TICK_PRECISION = 6;

const SI_SUFFIXES: readonly [number, string][] = [
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

/** Drops trailing zeros of a decimal mantissa: "1.200" → "1.2", "3.000" → "3". */
function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** `-1.20e-8` → `-1.2e-8`, `5e+5` → `5e5`. */
function exponential(value: number, significant: number): string {
  const [mantissa, exponent] = value.toExponential(significant - 1).split('e') as [string, string];
  return `${trimZeros(mantissa)}e${exponent.replace(/^\+/, '')}`;
}

/** 54000 → "54k", 1500000 → "1.5M" (values of at least 10,000 in magnitude). */
function siSuffixed(value: number, significant: number): string {
  const abs = Math.abs(value);
  for (const [scale, suffix] of SI_SUFFIXES) {
    if (abs >= scale) return `${trimZeros((value / scale).toPrecision(significant))}${suffix}`;
  }
  return String(value);
}

/**
 * An axis tick label: the shortest exact text of the tick (ticks are round numbers), tiny
 * magnitudes (< 1e-3) as exponents, large ones (≥ 1e4) with k/M/G/T.
 * @example formatTick(4e-8) // '4e-8'
 * @example formatTick(0.15000000000000002) // '0.15'
 * @example formatTick(54000) // '54k'
 */
export function formatTick(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const clean = Number(value.toPrecision(TICK_PRECISION));
  const abs = Math.abs(clean);
  if (abs === 0) return '0';
  if (abs < 1e-3) return exponential(clean, TICK_PRECISION);
  if (abs >= 1e4) return siSuffixed(clean, TICK_PRECISION);
  return String(clean);
}

/**
 * A metric value for a tooltip or table: integers exactly, others to `significant` digits with
 * trailing zeros dropped, tiny or huge magnitudes as exponents; NaN/null as an em dash.
 * @example formatValue(23) // '23'
 * @example formatValue(0.123456) // '0.1235'
 * @example formatValue(-1.2548e-8) // '-1.255e-8'
 */
export function formatValue(value: number | null | undefined, significant = 4): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e15) return String(value);
  const abs = Math.abs(value);
  if (abs < 1e-3 || abs >= 1e15) return exponential(value, significant);
  if (abs >= 10 ** significant) return value.toFixed(0);
  return trimZeros(value.toPrecision(significant));
}

/**
 * A training step (or turn index) as a whole number: steps are integers, so "23", never "23.00";
 * a fractional axis position (a zoomed tick) keeps one decimal.
 * @example formatStep(23) // '23'
 * @example formatStep(2.5) // '2.5'
 */
export function formatStep(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Math.round(value);
  return Math.abs(value - rounded) < 1e-9 ? String(rounded) : trimZeros(value.toFixed(1));
}
