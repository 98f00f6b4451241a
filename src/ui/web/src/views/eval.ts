/**
 * Evaluation view: per-category success tables. `turnwise eval` folders become one comparison
 * table (a row per policy); a training run's held-out evaluations become a table with a row per
 * evaluation step.
 */
import { api, type EvalMetrics, type EvalTables, type RunSummary } from '../api';
import { fmt, h, hashParams, pct } from '../dom';

function categoriesOf(tables: EvalTables['tables']): string[] {
  return [...new Set(tables.flatMap((t) => Object.keys(t.categories)))].sort();
}

function table(testid: string, head: string[], rows: (string | number)[][]): HTMLElement {
  return h(
    'table',
    { class: 'grid', 'data-testid': testid },
    h('thead', {}, h('tr', {}, ...head.map((c) => h('th', {}, c)))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c, i) => h('td', { class: i === 0 ? '' : 'num' }, c))))),
  );
}

const cell = (m: EvalMetrics | undefined) => (m?.successRate === undefined ? '—' : `${pct(m.successRate)}${m.samples !== undefined ? ` (${m.samples})` : ''}`);

function harnessSection(folder: string, runs: { run: RunSummary; tables: EvalTables }[]): HTMLElement {
  const setup = (runs[0]?.tables.setup ?? {}) as Record<string, unknown>;
  const categories = categoriesOf(runs.flatMap((r) => r.tables.tables));
  const rows = runs.map(({ run, tables }) => {
    const t = tables.tables[0];
    return [run.name, pct(t?.overall.successRate), fmt(t?.overall.avgAtN), fmt(t?.overall.passAtN), fmt(t?.overall.meanTurns), ...categories.map((c) => cell(t?.categories[c]))];
  });
  return h(
    'section',
    { class: 'eval-section' },
    h('h2', {}, folder),
    h('p', { class: 'muted' }, `${setup.env ?? '?'} · ${setup.split ?? '?'} split · ${setup.tasks ?? '?'} items × ${setup.samples ?? '?'} samples · horizon ${setup.horizon ?? '?'} · seed ${setup.seed ?? '?'}`),
    table('eval-table', ['policy', 'success', 'Avg@n', 'Pass@n', 'mean turns', ...categories.map((c) => `${c} success`)], rows),
  );
}

function trainSection(run: RunSummary, tables: EvalTables): HTMLElement {
  const categories = categoriesOf(tables.tables);
  const rows = tables.tables.map((t) => [`step ${t.step}`, cell(t.overall), fmt(t.overall.meanTurns), pct(t.overall.truncationRate), ...categories.map((c) => cell(t.categories[c]))]);
  return h(
    'section',
    { class: 'eval-section' },
    h('h2', {}, run.id),
    h('p', { class: 'muted' }, `held-out (test split) evaluations during training · ${run.env ?? '?'}${categories.length ? '' : ' · no categories in this environment'}`),
    tables.tables.length ? table('eval-table', ['evaluation', 'success (episodes)', 'mean turns', 'truncated', ...categories.map((c) => `${c} success`)], rows) : h('p', {}, 'no evaluations yet'),
  );
}

export function renderEval(root: HTMLElement): () => void {
  const only = hashParams().get('run');
  const status = h('p', { class: 'muted' }, 'loading…');
  const body = h('div');
  root.append(h('h1', {}, 'Evaluation'), status, body);
  void (async () => {
    try {
      const runs = (await api.runs()).runs.filter((r) => !only || r.id === only || (r.kind === 'eval' && r.folder === only.split(':')[0]));
      const loaded = await Promise.all(runs.map(async (run) => ({ run, tables: await api.evalTables(run.id) })));
      const harness = new Map<string, typeof loaded>();
      for (const entry of loaded.filter((e) => e.tables.kind === 'harness')) harness.set(entry.run.folder, [...(harness.get(entry.run.folder) ?? []), entry]);
      body.replaceChildren(
        ...[...harness.entries()].map(([folder, entries]) => harnessSection(folder, entries)),
        ...loaded.filter((e) => e.tables.kind === 'train').map((e) => trainSection(e.run, e.tables)),
      );
      status.textContent = `${harness.size} eval folder(s), ${loaded.filter((e) => e.tables.kind === 'train').length} training run(s)`;
    } catch (error) {
      status.textContent = `cannot load evaluations: ${(error as Error).message}`;
    }
  })();
  return () => {};
}
