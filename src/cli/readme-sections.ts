/**
 * The README tables generated from code, so documentation cannot drift from the schema, the metric
 * vocabulary or the environment registry.
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

/** Every generated section by marker name. */
export function readmeSections(): Record<string, string> {
  return { config: configMarkdownTable(), metrics: metricsMarkdownTable(), environments: environmentsMarkdownTable() };
}

/**
 * Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` for each section.
 * @example replaceSections(readme, { metrics: metricsMarkdownTable() })
 */
export function replaceSections(text: string, sections: Record<string, string>): string {
  let out = text;
  for (const [name, body] of Object.entries(sections)) {
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    const i = out.indexOf(start);
    const j = out.indexOf(end);
    if (i < 0 || j < i) throw new Error(`README is missing the ${start} … ${end} markers`);
    out = `${out.slice(0, i + start.length)}\n${body}\n${out.slice(j)}`;
  }
  return out;
}
