/**
 * The comparison table: one row per policy; one column per category (Avg@n / Pass@n), then the
 * overall Avg@n, Pass@n, success rate, mean turns, truncation and error rates, and token usage of
 * remote policies. Markdown, as AgentGym-RL's result tables are laid out.
 */
import type { EvalMetrics } from './metrics.js';

/** What the table needs of a report (a subset of `EvalReport`). */
export interface ReportView {
  readonly env: string;
  readonly split: string;
  readonly tasks: number;
  readonly samples: number;
  readonly seed: number;
  readonly horizon: number;
  readonly runDir?: string;
  readonly policies: readonly {
    readonly name: string;
    readonly description: string;
    readonly summary: { readonly overall: EvalMetrics; readonly perCategory: Readonly<Record<string, EvalMetrics>> };
    readonly usage: { readonly promptTokens: number; readonly completionTokens: number; readonly retries: number; readonly contextLengthRefusals?: number } | null;
  }[];
}

const f3 = (x: number) => x.toFixed(3);

/**
 * The Markdown comparison (a caption line, the table, and one line per policy saying what it is).
 * @example console.log(markdownReport(report));
 */
export function markdownReport(report: ReportView): string {
  const n = report.samples;
  const categories = [...new Set(report.policies.flatMap((p) => Object.keys(p.summary.perCategory)))].sort();
  const anyUsage = report.policies.some((p) => p.usage !== null);
  const header = [
    'policy',
    ...categories.map((c) => `${c} Avg@${n} / Pass@${n}`),
    `Avg@${n}`,
    `Pass@${n}`,
    'success',
    'mean turns',
    'truncated',
    'error',
    ...(anyUsage ? ['tokens in / out'] : []),
  ];
  const lines = [
    `${report.env} · ${report.split} split · ${report.tasks} items × ${n} sample${n === 1 ? '' : 's'} · horizon ${report.horizon} · seed ${report.seed}`,
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
  ];
  for (const p of report.policies) {
    const o = p.summary.overall;
    const cells = [
      p.name,
      ...categories.map((c) => {
        const m = p.summary.perCategory[c];
        return m === undefined ? '–' : `${f3(m.avgAtN)} / ${f3(m.passAtN)}`;
      }),
      f3(o.avgAtN),
      f3(o.passAtN),
      f3(o.successRate),
      o.meanTurns.toFixed(2),
      f3(o.truncationRate),
      f3(o.errorRate),
      ...(anyUsage ? [p.usage === null ? '–' : `${p.usage.promptTokens} / ${p.usage.completionTokens}`] : []),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push('');
  for (const p of report.policies) {
    const retries = p.usage && p.usage.retries > 0 ? ` (${p.usage.retries} retried requests)` : '';
    lines.push(`- ${p.name}: ${p.description}${retries}`);
    const refused = p.usage?.contextLengthRefusals ?? 0;
    if (refused > 0) {
      lines.push(`  - ${refused} request${refused === 1 ? ' was' : 's were'} refused by the server as longer than its model's context: those episodes ended by length (truncated), not in error; raise the server's context (vLLM --max-model-len, turnwise serve --max-context) or lower max-tokens`);
    }
  }
  if (report.runDir !== undefined) lines.push(`- trajectories: ${report.runDir}/run.db (split eval, one run per policy)`);
  return lines.join('\n');
}
