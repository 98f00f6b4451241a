/**
 * Offline figures: learning curves as SVG (ECharts' server-side SVG renderer) and PNG (resvg).
 *
 * Why ECharts + resvg: the dashboard already draws its curves with ECharts, so an offline figure
 * looks like the live one; ECharts renders to an SVG string without a DOM (`ssr: true`), and
 * `@resvg/resvg-js` rasterises SVG in Rust with no browser or native canvas build.
 * Each series may carry a min/max band (e.g. over seeds), drawn as a shaded area behind its line.
 * Tick labels come from `format/numbers.ts`, as in the dashboard.
 */
import { Resvg } from '@resvg/resvg-js';
import * as echarts from 'echarts';
import { InvalidArgumentError } from '../core/errors.js';
import { forLogScale } from './format/log-scale.js';
import { formatStep, formatTick } from './format/numbers.js';
import { emaSmooth } from './format/smoothing.js';

/** One point of a curve. `y` NaN (or null) leaves a gap. */
export interface PlotPoint {
  readonly x: number;
  readonly y: number | null;
}

/** A min/max envelope at an x. */
export interface BandPoint {
  readonly x: number;
  readonly min: number;
  readonly max: number;
}

/** One labelled curve, optionally with a band around it. */
export interface PlotSeries {
  readonly label: string;
  readonly points: readonly PlotPoint[];
  /** Shaded min/max envelope (e.g. over seeds); same x values as `points`, any order. */
  readonly band?: readonly BandPoint[];
}

/** A vertical marker (e.g. a horizon stage change). */
export interface PlotMarker {
  readonly x: number;
  readonly label: string;
}

/** What {@link plotSeries} draws. */
export interface PlotSpec {
  readonly series: readonly PlotSeries[];
  readonly title?: string;
  readonly xLabel?: string;
  readonly yLabel?: string;
  readonly markers?: readonly PlotMarker[];
  /** EMA weight in [0, 1) (TensorBoard's smoothing): draws each smoothed line over its faint raw one. Default 0. */
  readonly smoothing?: number;
  /** Base-10 logarithmic y axis; values ≤ 0 are left out. No bands on a log axis. */
  readonly logY?: boolean;
  /** Pixels. Default 800 × 450. */
  readonly width?: number;
  readonly height?: number;
}

/** ECharts' default palette, so that a line and its band share a colour. */
const PALETTE = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc'];

const finiteOrNull = (v: number | null): number | null => (v === null || !Number.isFinite(v) ? null : v);

/**
 * Renders curves to an SVG string (no DOM needed).
 * @example
 * const svg = plotSeries({ title: 'success', xLabel: 'step', yLabel: 'rate',
 *   series: [{ label: 'grpo', points: [{ x: 0, y: 0.2 }, { x: 1, y: 0.5 }], band: [{ x: 0, min: 0.1, max: 0.3 }, { x: 1, min: 0.4, max: 0.6 }] }] });
 */
export function plotSeries(spec: PlotSpec): string {
  if (spec.series.length === 0) throw InvalidArgumentError.format('series', 'expected at least one series to plot');
  spec.series.forEach((s, i) => {
    for (const p of s.points) {
      if (!Number.isFinite(p.x)) throw InvalidArgumentError.format(`series[${i}].points.x`, `expected finite numbers, got ${p.x}`);
    }
  });
  const smoothing = spec.smoothing ?? 0;
  if (!(smoothing >= 0 && smoothing < 1)) throw InvalidArgumentError.format('smoothing', `expected a weight in [0, 1), got ${smoothing}`);
  if (spec.logY && spec.series.some((s) => (s.band?.length ?? 0) > 0)) throw InvalidArgumentError.format('logY', 'a min–max band cannot be drawn on a log axis; drop the band or the log scale');
  const integerX = spec.series.every((s) => s.points.every((p) => Number.isInteger(p.x)));
  const width = spec.width ?? 800;
  const height = spec.height ?? 450;
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    chart.setOption({
      animation: false,
      backgroundColor: '#ffffff',
      color: PALETTE,
      title: spec.title ? { text: spec.title, left: 'center', textStyle: { fontSize: 15 } } : undefined,
      legend: { top: spec.title ? 34 : 4, data: spec.series.map((s) => s.label) },
      grid: { left: 72, right: 28, top: spec.title ? 72 : 40, bottom: 52 },
      // Steps and turn indices are whole numbers: integer ticks only, printed as "23", not "23.00".
      xAxis: integerX
        ? { type: 'value', name: spec.xLabel ?? '', nameLocation: 'middle', nameGap: 28, scale: true, minInterval: 1, axisLabel: { formatter: (v: number) => formatStep(v) } }
        : { type: 'value', name: spec.xLabel ?? '', nameLocation: 'middle', nameGap: 28, scale: true, axisLabel: { formatter: (v: number) => formatTick(v) } },
      // Tiny values as exponents ("4e-8", not "0.00000004"), large ones with k/M.
      yAxis: spec.logY
        ? { type: 'log', logBase: 10, name: spec.yLabel ?? '', nameLocation: 'middle', nameGap: 52, axisLabel: { formatter: (v: number) => formatTick(v) } }
        : { type: 'value', name: spec.yLabel ?? '', nameLocation: 'middle', nameGap: 52, scale: true, axisLabel: { formatter: (v: number) => formatTick(v) } },
      series: spec.series.flatMap((s, i) => seriesOptions(s, i, i === 0 ? spec.markers : undefined, { smoothing, logY: spec.logY === true })),
    });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

/**
 * Rasterises an SVG (from {@link plotSeries}) to PNG bytes, using the system's fonts for text.
 * @example writeFileSync('curves.png', svgToPng(plotSeries(spec)));
 */
export function svgToPng(svg: string, options: { scale?: number } = {}): Buffer {
  const scale = options.scale ?? 2;
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: scale },
    background: '#ffffff',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

/**
 * The line of a series (smoothed, over its faint raw line, when `smoothing` > 0), plus two stacked
 * areas (min, then max - min) when it has a band.
 */
function seriesOptions(s: PlotSeries, index: number, markers: readonly PlotMarker[] | undefined, view: { smoothing: number; logY: boolean }): object[] {
  const color = PALETTE[index % PALETTE.length];
  const sorted = [...s.points].sort((a, b) => a.x - b.x);
  const xy = sorted.map((p): [number, number | null] => [p.x, finiteOrNull(p.y)]);
  const raw = view.logY ? forLogScale(xy).points : xy;
  const smoothed = view.smoothing > 0 ? emaSmooth(raw, view.smoothing) : null;
  const faint = smoothed
    ? [{ name: s.label, type: 'line', showSymbol: false, silent: true, lineStyle: { width: 1, color, opacity: 0.3 }, itemStyle: { color }, data: raw, z: 2 }]
    : [];
  const line = {
    name: s.label,
    type: 'line',
    showSymbol: !smoothed && sorted.length <= 40,
    symbolSize: 5,
    lineStyle: { width: 2, color },
    itemStyle: { color },
    data: smoothed ?? raw,
    z: 3,
    ...(markers && markers.length > 0
      ? {
          markLine: {
            symbol: 'none',
            silent: true,
            lineStyle: { type: 'dashed', color: '#888' },
            label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
            data: markers.map((m) => ({ xAxis: m.x, name: m.label })),
          },
        }
      : {}),
  };
  if (!s.band || s.band.length === 0) return [line, ...faint];
  const band = [...s.band].sort((a, b) => a.x - b.x);
  const stack = `band-${index}`;
  // Why two stacked series: ECharts has no "area between two lines"; stacking a transparent
  // lower bound and the (max - min) difference fills exactly the envelope.
  return [
    { name: s.label, type: 'line', stack, symbol: 'none', lineStyle: { opacity: 0 }, data: band.map((b) => [b.x, b.min]), silent: true, z: 1 },
    {
      name: s.label,
      type: 'line',
      stack,
      symbol: 'none',
      lineStyle: { opacity: 0 },
      areaStyle: { color, opacity: 0.2 },
      data: band.map((b) => [b.x, b.max - b.min]),
      silent: true,
      z: 2,
    },
    line,
    ...faint,
  ];
}
