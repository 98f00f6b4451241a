/**
 * Metrics export read back: a short training with `train.export: tensorboard` leaves an event file
 * next to run.db whose records, tags, steps and values are the run store's; `turnwise export`
 * writes the same metrics as TensorBoard, CSV and JSON lines.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { exportRun } from '../../src/store/export/export-run.js';
import { readTfEvents } from '../../src/store/export/tfevents.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-export-'));
const runDir = join(dir, 'exported');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every metric of the run store: name -> step -> value. */
let stored: Map<string, Map<number, number>>;

beforeAll(async () => {
  const config = resolveConfig(
    parseConfig({
      seed: 5,
      run: { dir, name: 'exported' },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      algorithm: { tasksPerStep: 2, groupSize: 2 },
      train: { steps: 2, evalEvery: 2, evalTasks: 8, checkpointEvery: 0, export: 'tensorboard' },
    }),
  );
  const result = await trainRun({ config, runDir });
  expect(result.status).toBe('finished');
  const store = RunStore.open(runDir, { readonly: true });
  store.useRun(result.runId);
  stored = new Map(store.metricNames().map((name) => [name, new Map(store.metricsSeries(name).map((p) => [p.step, p.value]))]));
  store.close();
});

/** name -> step -> value of a TensorBoard event file (the last value of a step wins, as in TensorBoard). */
function fromEvents(path: string): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const event of readTfEvents(readFileSync(path))) {
    for (const [tag, value] of event.scalars) {
      if (!out.has(tag)) out.set(tag, new Map());
      out.get(tag)?.set(event.step, value);
    }
  }
  return out;
}

/**
 * `actual` holds every stored point (as float32 for event files). A CSV cell cannot tell NaN (a
 * metric with nothing to average, e.g. the full-vocabulary entropy when every token was constrained)
 * from "not logged": both are empty, so with `nanAbsent` a NaN point is expected to be missing.
 */
function expectSameMetrics(actual: Map<string, Map<number, number>>, float32: boolean, nanAbsent = false): void {
  expect([...actual.keys()].sort()).toEqual([...stored.keys()].sort());
  for (const [name, points] of stored) {
    const kept = nanAbsent ? [...points].filter(([, v]) => !Number.isNaN(v)) : [...points];
    const expected = kept.map(([step, v]) => [step, float32 ? Math.fround(v) : v]);
    expect([...(actual.get(name) ?? [])].sort((a, b) => a[0] - b[0]), name).toEqual(expected);
  }
}

describe('metrics export', () => {
  it('writes a live TensorBoard event file next to run.db with every logged metric', () => {
    const files = readdirSync(runDir).filter((f) => f.startsWith('events.out.tfevents.'));
    expect(files).toHaveLength(1);
    const events = readTfEvents(readFileSync(join(runDir, files[0] as string)));
    expect(events[0]?.fileVersion).toBe('brain.Event:2');
    // The untrained evaluation (step 0), then steps 1 and 2 (rollout and training metrics) and the step-2 evaluation.
    expect(new Set(events.slice(1).map((e) => e.step))).toEqual(new Set([0, 1, 2]));
    expect(stored.get('rollout/successRate')?.size).toBe(2);
    expect(stored.get('eval/successRate')?.size).toBe(2);
    expectSameMetrics(fromEvents(join(runDir, files[0] as string)), true);
  });

  it('exports TensorBoard, CSV and JSON lines that hold the same metrics', () => {
    const tb = exportRun(runDir, 'tensorboard', join(dir, 'tb'));
    expect(tb.steps).toBe(3);
    expectSameMetrics(fromEvents(tb.path), true);

    const csv = exportRun(runDir, 'csv');
    expect(csv.path).toBe(join(runDir, 'metrics.csv'));
    const [header, ...lines] = readFileSync(csv.path, 'utf8').trimEnd().split('\n');
    const columns = (header as string).split(',');
    expect(columns[0]).toBe('step');
    const fromCsv = new Map<string, Map<number, number>>(columns.slice(1).map((c) => [c, new Map()]));
    for (const line of lines) {
      const cells = line.split(',');
      const step = Number(cells[0]);
      cells.slice(1).forEach((cell, i) => {
        if (cell !== '') fromCsv.get(columns[i + 1] as string)?.set(step, Number(cell));
      });
    }
    expectSameMetrics(fromCsv, false, true);

    const jsonl = exportRun(runDir, 'jsonl');
    const fromJsonl = new Map<string, Map<number, number>>();
    for (const line of readFileSync(jsonl.path, 'utf8').trimEnd().split('\n')) {
      const { step, ...row } = JSON.parse(line) as Record<string, number | null>;
      for (const [name, value] of Object.entries(row)) {
        if (!fromJsonl.has(name)) fromJsonl.set(name, new Map());
        fromJsonl.get(name)?.set(step as number, value ?? Number.NaN); // NaN is written as null
      }
    }
    expectSameMetrics(fromJsonl, false);
  });

  it('runs as `turnwise export --json`, and names a bad format (exit 2)', () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'export', ...args], { encoding: 'utf8' });
    const ok = cli(runDir, '--format', 'jsonl', '--out', join(dir, 'm.jsonl'), '--json');
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ format: 'jsonl', path: join(dir, 'm.jsonl'), steps: 3 });
    const bad = cli(runDir, '--format', 'parquet');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^InvalidArgumentError: invalid '--format': expected tensorboard, csv, jsonl, got 'parquet'$/m);
  });
});
