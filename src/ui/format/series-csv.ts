/**
 * A chart's series as CSV (RFC 4180: comma-separated, CRLF line ends, fields with a comma, quote
 * or line break quoted), one row per point in long form: `metric,run,step,value[,smoothed]`. Pure.
 */
import type { SeriesPoint } from './smoothing.js';

/** One run's curve of the metric. */
export interface CsvSeries {
  readonly run: string;
  readonly points: readonly SeriesPoint[];
  /** Same steps as `points`; present when the chart is smoothed. */
  readonly smoothed?: readonly SeriesPoint[];
}

/** Quotes a field when it needs it. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The CSV text of a metric's series. Values keep full precision; gaps are empty fields.
 * @example seriesCsv('loss/kl', [{ run: 'a', points: [[1, 0.5]] }]) // 'metric,run,step,value\r\nloss/kl,a,1,0.5\r\n'
 */
export function seriesCsv(metric: string, series: readonly CsvSeries[]): string {
  const smoothed = series.some((s) => s.smoothed !== undefined);
  const rows = [['metric', 'run', 'step', 'value', ...(smoothed ? ['smoothed'] : [])].join(',')];
  for (const s of series) {
    s.points.forEach(([step, value], i) => {
      const cells = [csvField(metric), csvField(s.run), csvField(step), csvField(value)];
      if (smoothed) cells.push(csvField(s.smoothed?.[i]?.[1] ?? null));
      rows.push(cells.join(','));
    });
  }
  return `${rows.join('\r\n')}\r\n`;
}

/**
 * A file name for the CSV of a metric: `rollout/successRate` → `rollout_successRate.csv`.
 * @example csvFileName('rollout/successRate') // 'rollout_successRate.csv'
 */
export function csvFileName(metric: string): string {
  return `${metric.replace(/[^A-Za-z0-9._-]+/g, '_')}.csv`;
}
