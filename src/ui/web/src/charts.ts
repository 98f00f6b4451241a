/**
 * ECharts, tree-shaken to what the curves need (line charts, axes, legend, tooltip, zoom,
 * mark lines and points), rendered on canvas. Horizon stage changes are dashed lines in the run's
 * colour; collapse alarms are red lines with a red pin on the curve of the metric they are about.
 * A metric chart is a card: the plot, and a toolbar to switch its y axis to log scale and to
 * download its series as CSV. Smoothing (TensorBoard's debiased EMA) draws the smoothed line over
 * a faint raw one.
 */
import { LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, MarkPointComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { forLogScale } from '../../format/log-scale.js';
import { csvFileName, seriesCsv } from '../../format/series-csv.js';
import { emaSmooth } from '../../format/smoothing.js';
import type { Point, RunEvent } from './api';
import { axisTooltip, LINE_SUFFIX, RAW_SUFFIX, stepAxis, TickRecorder, valueAxis } from './chart-axes';
import { downloadText, h } from './dom';

echarts.use([LineChart, GridComponent, LegendComponent, TooltipComponent, TitleComponent, MarkLineComponent, MarkPointComponent, DataZoomComponent, CanvasRenderer]);

/** One run's curve of a metric. */
export interface CurveData {
  run: string;
  points: Point[];
  /** Horizon stage changes of the run. */
  stages: RunEvent[];
  /** Collapse alarms of the run about this metric (`alarm/<name>` events). */
  alarms?: RunEvent[];
}

const ALARM_RED = '#d62728';

/** `alarm/entropyCollapse` → `entropyCollapse`. */
const alarmName = (e: RunEvent): string => e.kind.replace(/^alarm\//, '');

const PALETTE = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc'];

function stageLabel(e: RunEvent): string {
  const horizon = (e.data as { horizon?: number } | null)?.horizon;
  return horizon === undefined ? 'stage' : `H=${horizon}`;
}

/** Stage and alarm lines of a run. */
function markLine(c: CurveData, color: string): object | undefined {
  const alarms = c.alarms ?? [];
  if (c.stages.length === 0 && alarms.length === 0) return undefined;
  return {
    symbol: 'none',
    silent: true,
    lineStyle: { type: 'dashed', color },
    label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
    data: [
      ...c.stages.map((e) => ({ xAxis: e.step, name: stageLabel(e) })),
      ...alarms.map((e) => ({ xAxis: e.step, name: `⚠ ${alarmName(e)}`, lineStyle: { type: 'solid', color: ALARM_RED, width: 1.5 }, label: { color: ALARM_RED, fontWeight: 'bold' } })),
    ],
  };
}

/** Red pins on the curve at each alarm's step (where the drawn curve has a value there). */
function markPoint(c: CurveData, drawn: [number, number | null][]): object | undefined {
  const alarms = c.alarms ?? [];
  if (alarms.length === 0) return undefined;
  return {
    symbol: 'pin',
    symbolSize: 34,
    itemStyle: { color: ALARM_RED },
    label: { formatter: '!', color: '#fff', fontWeight: 'bold' },
    data: alarms.flatMap((e) => {
      const point = drawn.find(([step]) => step === e.step);
      return point && point[1] !== null ? [{ coord: [e.step, point[1]], name: alarmName(e) }] : [];
    }),
  };
}

/** How a metric chart draws its curves. */
export interface ChartView {
  /** EMA weight in [0, 1); 0 draws the logged values only. */
  smoothing: number;
  /** Base-10 logarithmic y axis (values ≤ 0 left out). */
  log: boolean;
}

/**
 * A chart card of one metric with one series per run; `update` redraws and records what it drew
 * on the card's data attributes (read by the browser tests, and handy when debugging).
 */
export class MetricChart {
  private readonly chart: echarts.ECharts;
  private curves: CurveData[] = [];
  private view: ChartView;
  private readonly logButton: HTMLButtonElement;
  private readonly ticks = new TickRecorder();

  constructor(
    /** The card: toolbar and plot. */
    readonly el: HTMLElement,
    readonly metric: string,
    view: ChartView,
    /** Called when the user switches the log scale of this chart. */
    onLogChange: (metric: string, log: boolean) => void,
  ) {
    this.view = { ...view };
    const plot = h('div', { class: 'plot' });
    this.logButton = h('button', { class: 'tool', 'data-testid': 'log-toggle', title: 'logarithmic y axis (values ≤ 0 are left out)' }, 'log y');
    this.logButton.addEventListener('click', () => {
      this.view.log = !this.view.log;
      onLogChange(metric, this.view.log);
      this.draw();
    });
    const csvButton = h('button', { class: 'tool', 'data-testid': 'csv-download', title: `download this chart's series as ${csvFileName(metric)}` }, 'CSV');
    csvButton.addEventListener('click', () => downloadText(csvFileName(metric), this.csv()));
    el.append(plot, h('div', { class: 'chart-tools' }, this.logButton, csvButton));
    this.chart = echarts.init(plot);
    new ResizeObserver(() => this.ticks.capture(this.el, () => this.chart.resize())).observe(plot);
  }

  /** New data, or a new smoothing weight. */
  update(curves: CurveData[], smoothing: number): void {
    this.curves = curves;
    this.view.smoothing = smoothing;
    this.draw();
  }

  /** The series as drawn (after the log scale's gaps), and their smoothed values when smoothed. */
  private drawn(): { run: string; points: [number, number | null][]; smoothed: [number, number | null][] | null; leftOut: number }[] {
    return this.curves.map((c) => {
      const { points, leftOut } = this.view.log ? forLogScale(c.points) : { points: c.points.map(([s, v]): [number, number | null] => [s, v]), leftOut: 0 };
      return { run: c.run, points, smoothed: this.view.smoothing > 0 ? emaSmooth(points, this.view.smoothing) : null, leftOut };
    });
  }

  /** The chart's series as CSV: the logged values, and the smoothed ones when smoothing is on. */
  csv(): string {
    return seriesCsv(
      this.metric,
      this.curves.map((c) => ({ run: c.run, points: c.points, ...(this.view.smoothing > 0 ? { smoothed: emaSmooth(c.points, this.view.smoothing) } : {}) })),
    );
  }

  private draw(): void {
    const drawn = this.drawn();
    const leftOut = drawn.reduce((n, d) => n + d.leftOut, 0);
    const smoothed = this.view.smoothing > 0;
    this.ticks.capture(this.el, () => this.chart.setOption(
      {
        animation: false,
        color: PALETTE,
        title: {
          text: this.metric,
          subtext: this.view.log ? `log scale${leftOut ? ` · ${leftOut} value${leftOut === 1 ? '' : 's'} ≤ 0 left out` : ''}` : '',
          left: 8,
          top: 4,
          itemGap: 8,
          textStyle: { fontSize: 13 },
          subtextStyle: { fontSize: 11, color: '#6b7280' },
        },
        legend: { top: 4, right: 104, type: 'scroll', data: this.curves.map((c) => c.run) },
        tooltip: axisTooltip('step', smoothed),
        grid: { left: 12, right: 20, top: this.view.log ? 52 : 40, bottom: 28, containLabel: true },
        xAxis: stepAxis('step', true, this.ticks),
        yAxis: valueAxis(this.view.log, this.ticks),
        series: drawn.flatMap((d, i) => {
          const color = PALETTE[i % PALETTE.length] as string;
          const curve = this.curves[i] as CurveData;
          const line = {
            id: `${d.run}${LINE_SUFFIX}`,
            name: d.run,
            type: 'line',
            showSymbol: !smoothed && d.points.length <= 60,
            symbolSize: 5,
            lineStyle: { color, width: 2 },
            itemStyle: { color },
            data: d.smoothed ?? d.points,
            z: 3,
            markLine: markLine(curve, color),
            markPoint: markPoint(curve, d.points),
          };
          if (!smoothed) return [line];
          // Smoothed line first, so the legend shows its full colour.
          const raw = { id: `${d.run}${RAW_SUFFIX}`, name: d.run, type: 'line', showSymbol: false, silent: true, lineStyle: { color, width: 1, opacity: 0.3 }, itemStyle: { color, opacity: 0.3 }, data: d.points, z: 2 };
          return [line, raw];
        }),
      },
      { notMerge: true },
    ));
    this.logButton.setAttribute('aria-pressed', String(this.view.log));
    const data = this.el.dataset;
    data.points = JSON.stringify(Object.fromEntries(this.curves.map((c) => [c.run, c.points.length])));
    data.stages = String(this.curves.reduce((n, c) => n + c.stages.length, 0));
    data.alarms = String(this.curves.reduce((n, c) => n + (c.alarms?.length ?? 0), 0));
    data.log = String(this.view.log);
    data.leftOut = String(leftOut);
    data.smoothing = String(this.view.smoothing);
    // Last smoothed value per run (null when not smoothed).
    data.smoothedLast = JSON.stringify(Object.fromEntries(drawn.map((d) => [d.run, d.smoothed ? (d.smoothed.findLast(([, v]) => v !== null)?.[1] ?? null) : null])));
  }

  dispose(): void {
    this.chart.dispose();
  }
}

/** One line of an index chart: x = turn index (or episode length), y = the metric. */
export interface IndexLine {
  label: string;
  points: [number, number][];
}

/** A chart of a per-turn-index metric family: one line per run and step window. */
export class IndexChart {
  private readonly chart: echarts.ECharts;
  private readonly ticks = new TickRecorder();

  constructor(
    readonly el: HTMLElement,
    readonly family: string,
  ) {
    const plot = h('div', { class: 'plot' });
    el.append(plot);
    this.chart = echarts.init(plot);
    new ResizeObserver(() => this.ticks.capture(this.el, () => this.chart.resize())).observe(plot);
  }

  update(lines: IndexLine[]): void {
    const byLength = this.family === 'episodeLength';
    const xName = byLength ? 'turns' : 'turn index';
    this.ticks.capture(this.el, () => this.chart.setOption(
      {
        animation: false,
        color: PALETTE,
        title: { text: `${this.family} by ${byLength ? 'episode length' : 'turn index'}`, left: 8, top: 4, textStyle: { fontSize: 13 } },
        legend: { top: 24, right: 8, type: 'scroll', data: lines.map((l) => l.label) },
        tooltip: axisTooltip(xName, false),
        grid: { left: 12, right: 20, top: 56, bottom: 28, containLabel: true },
        xAxis: stepAxis(xName, false, this.ticks),
        yAxis: valueAxis(false, this.ticks),
        series: lines.map((l) => ({ id: `${l.label}${LINE_SUFFIX}`, name: l.label, type: 'line', showSymbol: true, symbolSize: 5, data: l.points })),
      },
      { notMerge: true },
    ));
    this.el.dataset.lines = JSON.stringify(Object.fromEntries(lines.map((l) => [l.label, l.points.length])));
  }

  dispose(): void {
    this.chart.dispose();
  }
}
