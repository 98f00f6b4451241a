/**
 * Axis and tooltip options shared by the dashboard's charts: integer steps, tick labels from
 * `format/numbers` (no "0.00000004", no "23.00"), and an axis tooltip that names the step and
 * shows each run's value (and its smoothed value when the chart is smoothed).
 */
import { formatStep, formatTick, formatValue } from '../../format/numbers.js';
import { escapeHtml } from './dom';

/**
 * The tick labels a chart last drew, per axis: the formatters below report each label they
 * produce, and the chart writes them on its element (`data-x-ticks`, `data-y-ticks`) for the
 * browser tests, which cannot read text off a canvas.
 */
export class TickRecorder {
  private readonly labels = { x: new Set<string>(), y: new Set<string>() };

  /** A formatter that records what it returns. */
  formatter(axis: 'x' | 'y', format: (v: number) => string): (v: number) => string {
    return (v) => {
      const label = format(v);
      this.labels[axis].add(label);
      return label;
    };
  }

  /** Runs a (re)render and writes the labels it drew onto `el`. */
  capture(el: HTMLElement, render: () => void): void {
    this.labels.x.clear();
    this.labels.y.clear();
    render();
    el.dataset.xTicks = JSON.stringify([...this.labels.x]);
    el.dataset.yTicks = JSON.stringify([...this.labels.y]);
  }
}

/** X axis of steps or turn indices: whole numbers only. */
export function stepAxis(name: string, scale: boolean, ticks: TickRecorder): object {
  return { type: 'value', name, nameGap: 22, nameLocation: 'middle', minInterval: 1, scale, axisLabel: { formatter: ticks.formatter('x', formatStep) } };
}

/** Y axis of a metric, linear or base-10 logarithmic. */
export function valueAxis(log: boolean, ticks: TickRecorder): object {
  const axisLabel = { formatter: ticks.formatter('y', formatTick) };
  return log ? { type: 'log', logBase: 10, axisLabel } : { type: 'value', scale: true, axisLabel };
}

/** What ECharts passes an axis tooltip formatter, as far as we read it. */
interface AxisParam {
  seriesId?: string;
  seriesName?: string;
  marker?: string;
  value?: unknown;
}

/** Series ids: `<label>\u0000raw` (the faint unsmoothed line) or `<label>\u0000line`. */
export const RAW_SUFFIX = '\u0000raw';
export const LINE_SUFFIX = '\u0000line';

const yOf = (p: AxisParam): number | null => (Array.isArray(p.value) && typeof p.value[1] === 'number' ? p.value[1] : null);

/**
 * The axis tooltip: `<xName> 23`, then one row per series label. When the chart is smoothed, each
 * label has a faint raw series (id ending RAW_SUFFIX) and a smoothed one, and the row shows both.
 */
export function axisTooltip(xName: string, smoothed: boolean): object {
  return {
    trigger: 'axis',
    formatter: (raw: unknown) => {
      const params = (Array.isArray(raw) ? raw : [raw]) as AxisParam[];
      const first = params[0];
      const x = Array.isArray(first?.value) && typeof first.value[0] === 'number' ? first.value[0] : null;
      const rows = new Map<string, { marker: string; value: number | null; smoothed: number | null }>();
      for (const p of params) {
        const label = p.seriesName ?? '';
        const row = rows.get(label) ?? { marker: '', value: null, smoothed: null };
        if (p.seriesId?.endsWith(RAW_SUFFIX)) row.value = yOf(p);
        else {
          row.marker = p.marker ?? '';
          if (smoothed) row.smoothed = yOf(p);
          else row.value = yOf(p);
        }
        rows.set(label, row);
      }
      const lines = [...rows.entries()].map(
        ([label, r]) => `${r.marker}${escapeHtml(label)}: <b>${formatValue(r.value)}</b>${smoothed ? ` · smoothed <b>${formatValue(r.smoothed)}</b>` : ''}`,
      );
      return [`${escapeHtml(xName)} ${x === null ? '' : formatStep(x)}`, ...lines].join('<br/>');
    },
  };
}
