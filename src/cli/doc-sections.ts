/**
 * The documentation tables generated from code, so the manual cannot drift from the schema, the
 * metric vocabulary or the environment registry: each lives in a page of `docs/` between
 * `<!-- name:start -->` and `<!-- name:end -->`. `npm run docs` rewrites them, `npm run docs --
 * --check` (and a unit test) fails when one is stale.
 */
import { configMarkdownTable } from '../core/config.js';
import { METRIC_FAMILIES, METRICS } from '../core/metrics.js';
import '../envs/index.js';
import { listEnvironments } from '../envs/registry.js';

/** Markdown of the metric vocabulary: single metrics, then the per-turn-index families. */
export function metricsMarkdownTable(): string {
  const rows = [...Object.entries(METRICS), ...Object.entries(METRIC_FAMILIES)].map(([name, doc]) => `| \`${name}\` | ${doc} |`);
  return ['| metric | meaning |', '|---|---|', ...rows].join('\n');
}

/** Markdown of the registered environments with their split sizes. */
export function environmentsMarkdownTable(): string {
  const rows = listEnvironments().map((spec) => {
    let sizes = ['—', '—'];
    try {
      const catalog = spec.catalog();
      sizes = [catalog.indices('train').length, catalog.indices('test').length].map((n) => n.toLocaleString('en-US'));
    } catch {
      // Remote environments take their tasks from the run config.
    }
    return `| \`${spec.name}\` | ${sizes[0]} | ${sizes[1]} | ${spec.description} |`;
  });
  return ['| environment | train tasks | test tasks | description |', '|---|---|---|---|', ...rows].join('\n');
}

/**
 * Every generated section, by page (a path from the repository root) and marker name.
 * @example docSections()['docs/metrics.md']?.metrics // '| metric | meaning |\n…'
 */
export function docSections(): Record<string, Record<string, string>> {
  return {
    'docs/configuration.md': { config: configMarkdownTable() },
    'docs/metrics.md': { metrics: metricsMarkdownTable() },
    'docs/environments.md': { environments: environmentsMarkdownTable() },
  };
}

/**
 * Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` for each section;
 * `page` names the document in the error when its markers are missing.
 * @example replaceSections(text, { metrics: metricsMarkdownTable() }, 'docs/metrics.md')
 */
export function replaceSections(text: string, sections: Record<string, string>, page = 'the document'): string {
  let out = text;
  for (const [name, body] of Object.entries(sections)) {
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    const i = out.indexOf(start);
    const j = out.indexOf(end);
    if (i < 0 || j < i) throw new Error(`${page} is missing the ${start} … ${end} markers`);
    out = `${out.slice(0, i + start.length)}\n${body}\n${out.slice(j)}`;
  }
  return out;
}
