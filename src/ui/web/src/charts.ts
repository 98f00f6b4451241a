/**
 * ECharts, tree-shaken to what the curves need (line charts, axes, legend, tooltip, zoom,
 * mark lines and points), rendered on canvas. Horizon stage changes are dashed lines in the run's
 * colour; collapse alarms are red lines with a red pin on the curve of the metric they are about.
 */
import { LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, MarkPointComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import type { Point, RunEvent } from './api';

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

/** A chart of one metric with one series per run; `update` redraws and records point counts on the element. */
export class MetricChart {
  private readonly chart: echarts.ECharts;

  constructor(
    readonly el: HTMLElement,
    readonly metric: string,
  ) {
    this.chart = echarts.init(el);
    new ResizeObserver(() => this.chart.resize()).observe(el);
  }

  update(curves: CurveData[]): void {
    this.chart.setOption(
      {
        animation: false,
        color: PALETTE,
        title: { text: this.metric, left: 8, top: 4, textStyle: { fontSize: 13 } },
        legend: { top: 4, right: 8, type: 'scroll', data: curves.map((c) => c.run) },
        tooltip: { trigger: 'axis', valueFormatter: (v: unknown) => (typeof v === 'number' ? v.toPrecision(4) : String(v)) },
        grid: { left: 56, right: 20, top: 40, bottom: 32 },
        xAxis: { type: 'value', name: 'step', nameGap: 20, nameLocation: 'middle', minInterval: 1, scale: true },
        yAxis: { type: 'value', scale: true },
        series: curves.map((c, i) => ({
          name: c.run,
          type: 'line',
          showSymbol: c.points.length <= 60,
          symbolSize: 5,
          data: c.points,
          markLine:
            c.stages.length === 0 && (c.alarms ?? []).length === 0
              ? undefined
              : {
                  symbol: 'none',
                  silent: true,
                  lineStyle: { type: 'dashed', color: PALETTE[i % PALETTE.length] },
                  label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
                  data: [
                    ...c.stages.map((e) => ({ xAxis: e.step, name: stageLabel(e) })),
                    ...(c.alarms ?? []).map((e) => ({ xAxis: e.step, name: `⚠ ${alarmName(e)}`, lineStyle: { type: 'solid', color: ALARM_RED, width: 1.5 }, label: { color: ALARM_RED, fontWeight: 'bold' } })),
                  ],
                },
          markPoint:
            (c.alarms ?? []).length === 0
              ? undefined
              : {
                  symbol: 'pin',
                  symbolSize: 34,
                  itemStyle: { color: ALARM_RED },
                  label: { formatter: '!', color: '#fff', fontWeight: 'bold' },
                  data: (c.alarms ?? []).flatMap((e) => {
                    const point = c.points.find(([step]) => step === e.step);
                    return point && point[1] !== null ? [{ coord: [e.step, point[1]], name: alarmName(e) }] : [];
                  }),
                },
        })),
      },
      { notMerge: true },
    );
    // Read by the browser tests (and handy when debugging): points per run, as drawn.
    this.el.dataset.points = JSON.stringify(Object.fromEntries(curves.map((c) => [c.run, c.points.length])));
    this.el.dataset.stages = String(curves.reduce((n, c) => n + c.stages.length, 0));
    this.el.dataset.alarms = String(curves.reduce((n, c) => n + (c.alarms?.length ?? 0), 0));
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

  constructor(
    readonly el: HTMLElement,
    readonly family: string,
  ) {
    this.chart = echarts.init(el);
    new ResizeObserver(() => this.chart.resize()).observe(el);
  }

  update(lines: IndexLine[]): void {
    const byLength = this.family === 'episodeLength';
    this.chart.setOption(
      {
        animation: false,
        color: PALETTE,
        title: { text: `${this.family} by ${byLength ? 'episode length' : 'turn index'}`, left: 8, top: 4, textStyle: { fontSize: 13 } },
        legend: { top: 24, right: 8, type: 'scroll', data: lines.map((l) => l.label) },
        tooltip: { trigger: 'axis', valueFormatter: (v: unknown) => (typeof v === 'number' ? v.toPrecision(4) : String(v)) },
        grid: { left: 56, right: 20, top: 56, bottom: 32 },
        xAxis: { type: 'value', name: byLength ? 'turns' : 'turn index', nameGap: 20, nameLocation: 'middle', minInterval: 1 },
        yAxis: { type: 'value', scale: true },
        series: lines.map((l) => ({ name: l.label, type: 'line', showSymbol: true, symbolSize: 5, data: l.points })),
      },
      { notMerge: true },
    );
    this.el.dataset.lines = JSON.stringify(Object.fromEntries(lines.map((l) => [l.label, l.points.length])));
  }

  dispose(): void {
    this.chart.dispose();
  }
}
