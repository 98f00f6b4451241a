/**
 * `turnwise export`: a run's metrics out of SQLite into the files other tools read — TensorBoard
 * event files (what verl, AgentGym-RL and RLlib users plot with), a wide CSV (one row per step, one
 * column per metric; pandas, spreadsheets) or JSON lines (one object per step). NaN is written as an
 * empty CSV cell and as JSON `null`; TensorBoard keeps it as NaN.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../core/errors.js';
import { RunStore } from '../run-store.js';
import { TfEventWriter } from './tfevents-writer.js';

/** The export formats. */
export const EXPORT_FORMATS = ['tensorboard', 'csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Every metric of a run, by step: `[step, { name: value }]` in step order. */
export type MetricRows = readonly (readonly [number, Readonly<Record<string, number>>])[];

/** What an export wrote. */
export interface ExportResult {
  readonly format: ExportFormat;
  /** The file written (for tensorboard, the event file inside the folder). */
  readonly path: string;
  readonly steps: number;
  readonly metrics: readonly string[];
}

/**
 * Reads a run folder's metrics as rows by step.
 * @example const { rows, names } = metricRows(store);
 */
export function metricRows(store: RunStore): { rows: MetricRows; names: string[] } {
  const names = store.metricNames();
  const byStep = new Map<number, Record<string, number>>();
  for (const name of names) {
    for (const { step, value } of store.metricsSeries(name)) {
      const row = byStep.get(step) ?? {};
      row[name] = value;
      byStep.set(step, row);
    }
  }
  return { rows: [...byStep].sort((a, b) => a[0] - b[0]), names };
}

function csvCell(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The wide CSV of some rows: `step,<name>,…`, empty cells where a metric was not logged (or NaN).
 * @example metricsCsv([[1, { a: 0.5 }]], ['a']) // 'step,a\n1,0.5\n'
 */
export function metricsCsv(rows: MetricRows, names: readonly string[]): string {
  const lines = [['step', ...names].map(csvCell).join(',')];
  for (const [step, row] of rows) lines.push([String(step), ...names.map((n) => (row[n] === undefined || Number.isNaN(row[n]) ? '' : String(row[n])))].join(','));
  return `${lines.join('\n')}\n`;
}

/**
 * JSON lines, one object per step: `{"step":1,"a":0.5}` (NaN as null).
 * @example metricsJsonl([[1, { a: 0.5 }]]) // '{"step":1,"a":0.5}\n'
 */
export function metricsJsonl(rows: MetricRows): string {
  return rows.map(([step, row]) => `${JSON.stringify({ step, ...row }, (_k, v: unknown) => (typeof v === 'number' && Number.isNaN(v) ? null : v))}\n`).join('');
}

/**
 * Exports a run folder's metrics. `out` is a folder for tensorboard (default `<runDir>/export/`),
 * a file otherwise (default `<runDir>/metrics.csv` / `metrics.jsonl`). Event wall times are the
 * run's start time (the store keeps steps, not the time of each metric).
 * @example await exportRun('runs/babyai-grpo', 'tensorboard') // runs/babyai-grpo/export/events.out.tfevents.…
 */
export function exportRun(runDir: string, format: string, out?: string): ExportResult {
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw InvalidArgumentError.format('--format', `expected ${EXPORT_FORMATS.join(', ')}, got '${format}'`);
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const run = store.runs()[0];
    if (run === undefined) throw InvalidArgumentError.format('run', `${runDir} holds no run`);
    store.useRun(run.id);
    const { rows, names } = metricRows(store);
    const fmt = format as ExportFormat;
    let path: string;
    if (fmt === 'tensorboard') {
      const writer = TfEventWriter.create(out ?? join(runDir, 'export'), run.createdAt / 1000);
      for (const [step, row] of rows) writer.scalars(step, row, run.createdAt / 1000);
      writer.close();
      path = writer.path;
    } else {
      path = out ?? join(runDir, `metrics.${fmt}`);
      writeFileSync(path, fmt === 'csv' ? metricsCsv(rows, names) : metricsJsonl(rows));
    }
    return { format: fmt, path, steps: rows.length, metrics: names };
  } finally {
    store.close();
  }
}
