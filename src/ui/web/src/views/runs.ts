/** The run list: config, status, backend and latest metrics of every run, refreshed every few seconds. */
import { api, type RunSummary } from '../api';
import { fmt, h, pct } from '../dom';

const LATEST: [string, string, (v: number | null) => string][] = [
  ['rollout/successRate', 'success', pct],
  ['eval/successRate', 'eval success', pct],
  ['rollout/meanReward', 'reward', (v) => fmt(v)],
  ['rollout/meanTurns', 'turns', (v) => fmt(v)],
  ['horizon/current', 'horizon', (v) => fmt(v)],
  ['policy/staleness', 'staleness', (v) => fmt(v)],
];

function configLine(run: RunSummary): string {
  const c = run.config as Record<string, Record<string, unknown>> | null;
  if (run.kind === 'eval') {
    const e = c?.eval ?? {};
    return `eval · ${e.split ?? '?'} · ${e.tasks ?? '?'} items × ${e.samples ?? '?'} · horizon ${e.horizon ?? '?'}`;
  }
  const a = c?.algorithm ?? {};
  const hz = c?.horizon ?? {};
  const m = c?.model ?? {};
  const horizon = hz.schedule === 'fixed' ? `H=${hz.horizon}` : `${hz.schedule} ${JSON.stringify(hz.horizons ?? '')}`;
  return `${a.tasksPerStep ?? '?'}×${a.groupSize ?? '?'} episodes/step · ${horizon} · d${m.dModel ?? '?'}×${m.nLayers ?? '?'} · seed ${run.seed}`;
}

function row(run: RunSummary, selected: Set<string>): HTMLElement {
  const step = Math.max(0, ...Object.values(run.latest).map((p) => p[0]));
  return h(
    'tr',
    { 'data-testid': 'run-row', 'data-run': run.id },
    h('td', {}, h('input', { type: 'checkbox', checked: selected.has(run.id), onchange: (e) => toggle(selected, run.id, (e.target as HTMLInputElement).checked) })),
    h('td', {}, h('a', { href: `#/curves?runs=${encodeURIComponent(run.id)}`, class: 'run-name' }, run.id)),
    h('td', {}, h('span', { class: `badge status-${run.status}` }, run.status), healthNote(run)),
    h('td', {}, run.kind === 'eval' ? 'eval' : `${run.env ?? '?'} · ${run.algorithm ?? '?'}`),
    h('td', { class: 'muted' }, configLine(run)),
    h('td', {}, run.backend),
    h('td', { class: 'num' }, run.kind === 'eval' ? '—' : `${step}${run.totalSteps ? ` / ${run.totalSteps}` : ''}`),
    ...LATEST.map(([name, , f]) => h('td', { class: 'num', 'data-metric': name }, f(run.latest[name]?.[1] ?? null))),
    h(
      'td',
      {},
      h('a', { href: `#/trajectories?run=${encodeURIComponent(run.id)}` }, 'trajectories'),
      ' · ',
      h('a', { href: `#/eval?run=${encodeURIComponent(run.id)}` }, 'eval'),
    ),
  );
}

/** The newest environment-server health report, under the status (failing in red, recovered muted). */
function healthNote(run: RunSummary): HTMLElement | string {
  const latest = run.health?.latest;
  if (!latest) return '';
  const count = run.health.reports;
  return h(
    'div',
    { class: latest.kind === 'recovered' ? 'muted health' : 'health health-bad', 'data-testid': 'run-health', 'data-kind': latest.kind, title: `${count} environment-server report${count === 1 ? '' : 's'}; the newest at step ${latest.step}` },
    `step ${latest.step}: ${latest.message}`,
  );
}

function toggle(selected: Set<string>, id: string, on: boolean): void {
  if (on) selected.add(id);
  else selected.delete(id);
}

export function renderRuns(root: HTMLElement): () => void {
  const selected = new Set<string>();
  const body = h('tbody');
  const note = h('p', { class: 'muted' });
  const compare = h('button', { onclick: () => (location.hash = `#/curves?runs=${[...selected].map(encodeURIComponent).join(',')}`) }, 'Overlay curves of selected runs');
  root.append(
    h('h1', {}, 'Runs'),
    note,
    h(
      'table',
      { class: 'grid', 'data-testid': 'run-table' },
      h('thead', {}, h('tr', {}, h('th'), h('th', {}, 'run'), h('th', {}, 'status'), h('th', {}, 'env · algorithm'), h('th', {}, 'config'), h('th', {}, 'backend'), h('th', {}, 'step'), ...LATEST.map(([, label]) => h('th', {}, label)), h('th'))),
      body,
    ),
    h('p', {}, compare),
  );
  let stopped = false;
  const refresh = async () => {
    try {
      const { root: folder, runs, skipped } = await api.runs();
      if (stopped) return;
      note.textContent = `${runs.length} run${runs.length === 1 ? '' : 's'} in ${folder}${skipped.length ? ` · ${skipped.length} folder(s) unreadable: ${skipped.map((s) => `${s.folder} (${s.error})`).join('; ')}` : ''}`;
      body.replaceChildren(...[...runs].sort((a, b) => b.createdAt - a.createdAt).map((r) => row(r, selected)));
    } catch (error) {
      note.textContent = `cannot list runs: ${(error as Error).message}`;
    }
  };
  void refresh();
  const timer = setInterval(refresh, 5000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
