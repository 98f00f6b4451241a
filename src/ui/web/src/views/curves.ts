/**
 * Live curves: one chart per metric, every selected run overlaid, horizon stage changes marked
 * (dashed) and collapse alarms marked in red on the curve of their metric;
 * below them, behaviour by turn index (`by-turn.ts`). Finished runs are fetched once; running ones
 * follow the server-sent event stream (`snapshot` replaces, `delta` appends), so a curve grows
 * while the run trains. A smoothing slider (TensorBoard's EMA weight) applies to every curve; each
 * chart has its own log-scale switch and CSV download. Both are kept in the URL (`smooth`, `log`).
 */
import { api, type Point, type RunDelta, type RunEvent, type RunSummary } from '../api';
import { MetricChart } from '../charts';
import { h, hashParams, setHashParams } from '../dom';
import { SmoothingControl } from './smoothing-control';
import { ByTurnPanel, isFamilyMetric } from './by-turn';

/** The curves worth seeing first, in order (shown when any selected run logged them). */
const PREFERRED = [
  'rollout/successRate',
  'eval/successRate',
  'rollout/meanReward',
  'rollout/meanTurns',
  'rollout/truncationRate',
  'rollout/repeatedActionRate',
  'rollout/tokenEntropy',
  'rollout/zeroVarianceGroups',
  'rollout/groupSimilarity',
  'rollout/meanTurnsSuccess',
  'rollout/meanTurnsFailed',
  'horizon/current',
  'optim/gradNorm',
  'loss/approxKl',
  'loss/klRef',
  'loss/entropy',
  'policy/staleness',
  'throughput/sampleTokensPerSec',
  'throughput/trainTokensPerSec',
];

interface RunData {
  series: Record<string, Point[]>;
  /** Every run event (horizon stage changes, alarms, checkpoints...). */
  events: RunEvent[];
}

const isStage = (e: RunEvent) => e.kind === 'horizon/stage';
const isAlarm = (e: RunEvent) => e.kind.startsWith('alarm/');
/** The metric an alarm event is about (its data names it). */
const alarmMetric = (e: RunEvent): string | undefined => (e.data as { metric?: string } | null)?.metric;

export function renderCurves(root: HTMLElement): () => void {
  const params = hashParams();
  const cleanups: (() => void)[] = [];
  const data = new Map<string, RunData>();
  const charts = new Map<string, MetricChart>();
  const extra = new Set((params.get('extra') ?? '').split(',').filter(Boolean));
  let chosen: string[] = (params.get('runs') ?? '').split(',').filter(Boolean);
  const logScale = new Set((params.get('log') ?? '').split(',').filter(Boolean));
  const smoothing = new SmoothingControl(Number(params.get('smooth') ?? 0), () => {
    save();
    redraw();
  });
  const save = () => setHashParams('curves', { runs: chosen.join(','), extra: [...extra].join(','), smooth: smoothing.weight || undefined, log: [...logScale].join(',') });

  const picker = h('div', { class: 'picker', 'data-testid': 'run-picker' });
  const addMetric = h('select', { 'data-testid': 'add-metric' });
  const status = h('p', { class: 'muted', 'data-testid': 'curves-status' });
  const grid = h('div', { class: 'charts' });
  const byTurn = new ByTurnPanel();
  root.append(h('h1', {}, 'Curves'), picker, h('div', { class: 'controls' }, h('label', {}, 'Add a metric: ', addMetric), smoothing.el), status, grid, byTurn.el);

  // Per-turn-index families are drawn by the panel below, not as step curves.
  const allNames = () => [...new Set([...data.values()].flatMap((d) => Object.keys(d.series)))].filter((n) => !isFamilyMetric(n)).sort();
  const shownNames = () => {
    const names = new Set(allNames());
    // A metric an alarm fired on is always shown, so its marker is seen.
    const alarmed = [...data.values()].flatMap((d) => d.events.filter(isAlarm).map(alarmMetric)).filter((n): n is string => n !== undefined);
    const wanted = [...PREFERRED, ...extra, ...alarmed];
    return [...new Set(wanted)].filter((n) => names.has(n));
  };

  const redraw = () => {
    const shown = shownNames();
    for (const [name, chart] of charts) {
      if (!shown.includes(name)) {
        chart.dispose();
        chart.el.remove();
        charts.delete(name);
      }
    }
    for (const name of shown) {
      let chart = charts.get(name);
      if (!chart) {
        const el = h('div', { class: 'chart', 'data-testid': 'chart', 'data-metric': name });
        grid.append(el);
        chart = new MetricChart(el, name, { smoothing: smoothing.weight, log: logScale.has(name) }, (metric, on) => {
          if (on) logScale.add(metric);
          else logScale.delete(metric);
          save();
        });
        charts.set(name, chart);
      }
      chart.update(
        chosen
          .filter((id) => data.has(id))
          .map((id) => {
            const events = data.get(id)?.events ?? [];
            return { run: id, points: data.get(id)?.series[name] ?? [], stages: events.filter(isStage), alarms: events.filter((e) => isAlarm(e) && alarmMetric(e) === name) };
          }),
        smoothing.weight,
      );
    }
    byTurn.update(chosen.filter((id) => data.has(id)).map((id) => ({ run: id, series: data.get(id)?.series ?? {} })));
    const names = allNames().filter((n) => !shown.includes(n));
    addMetric.replaceChildren(h('option', { value: '' }, `(${names.length} more)`), ...names.map((n) => h('option', { value: n }, n)));
  };

  addMetric.addEventListener('change', () => {
    if (!addMetric.value) return;
    extra.add(addMetric.value);
    save();
    redraw();
  });

  const follow = (run: RunSummary) => {
    const source = new EventSource(api.streamUrl(run.id));
    const apply = (delta: RunDelta, replace: boolean) => {
      const d = replace ? { series: {}, events: [] } : (data.get(run.id) ?? { series: {}, events: [] });
      for (const [name, points] of Object.entries(delta.metrics)) d.series[name] = [...(d.series[name] ?? []), ...points];
      d.events = [...d.events, ...delta.events];
      data.set(run.id, d);
      if (delta.status) status.textContent = `${run.id}: ${delta.status} (live)`;
      redraw();
    };
    source.addEventListener('snapshot', (e) => apply(JSON.parse((e as MessageEvent).data), true));
    source.addEventListener('delta', (e) => apply(JSON.parse((e as MessageEvent).data), false));
    cleanups.push(() => source.close());
  };

  const load = async (run: RunSummary) => {
    if (run.status === 'running') return follow(run);
    const [metrics, events] = await Promise.all([api.metrics(run.id), api.events(run.id)]);
    data.set(run.id, { series: metrics.series, events: events.events });
    redraw();
  };

  void (async () => {
    try {
      const { runs } = await api.runs();
      const train = runs.filter((r) => r.kind === 'train').sort((a, b) => b.createdAt - a.createdAt);
      if (chosen.length === 0) chosen = train.slice(0, 4).map((r) => r.id);
      const toggle = (id: string, on: boolean) => {
        chosen = on ? [...chosen, id] : chosen.filter((c) => c !== id);
        save();
        const run = runs.find((r) => r.id === id);
        if (on && run && !data.has(id)) void load(run);
        else redraw();
      };
      picker.replaceChildren(
        'Runs: ',
        ...train.map((r) =>
          h('label', { class: 'chip' }, h('input', { type: 'checkbox', checked: chosen.includes(r.id), 'data-run': r.id, onchange: (e) => toggle(r.id, (e.target as HTMLInputElement).checked) }), ` ${r.id} `, h('span', { class: `badge status-${r.status}` }, r.status)),
        ),
      );
      const unknown = chosen.filter((id) => !runs.some((r) => r.id === id));
      status.textContent = unknown.length ? `unknown run(s): ${unknown.join(', ')}` : '';
      await Promise.all(runs.filter((r) => chosen.includes(r.id)).map(load));
    } catch (error) {
      status.textContent = `cannot load curves: ${(error as Error).message}`;
    }
  })();

  return () => {
    for (const c of cleanups) c();
    for (const chart of charts.values()) chart.dispose();
    byTurn.dispose();
  };
}
