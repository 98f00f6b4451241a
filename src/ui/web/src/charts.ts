/**
 * ECharts, tree-shaken to what the curves need (line charts, axes, legend, tooltip, zoom,
 * mark lines), rendered on canvas.
 */
import { LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import type { Point, RunEvent } from './api';

echarts.use([LineChart, GridComponent, LegendComponent, TooltipComponent, TitleComponent, MarkLineComponent, DataZoomComponent, CanvasRenderer]);

/** One run's curve of a metric. */
export interface CurveData {
  run: string;
  points: Point[];
  /** Horizon stage changes of the run. */
  stages: RunEvent[];
}

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
            c.stages.length === 0
              ? undefined
              : {
                  symbol: 'none',
                  silent: true,
                  lineStyle: { type: 'dashed', color: PALETTE[i % PALETTE.length] },
                  label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
                  data: c.stages.map((e) => ({ xAxis: e.step, name: stageLabel(e) })),
                },
        })),
      },
      { notMerge: true },
    );
    // Read by the browser tests (and handy when debugging): points per run, as drawn.
    this.el.dataset.points = JSON.stringify(Object.fromEntries(curves.map((c) => [c.run, c.points.length])));
    this.el.dataset.stages = String(curves.reduce((n, c) => n + c.stages.length, 0));
  }

  dispose(): void {
    this.chart.dispose();
  }
}
