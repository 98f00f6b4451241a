import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { plotCommand } from '../../src/cli/plot-command.js';
import { RunStore } from '../../src/store/run-store.js';
import { plotSeries, svgToPng } from '../../src/ui/plot.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-plot-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function makeRun(name: string, values: number[]): string {
  const dir = join(root, name);
  const store = RunStore.open(dir);
  store.createRun({ id: name, name, createdAt: 0, config: {}, backend: 'cpu', seed: 1 });
  for (const [i, v] of values.entries()) store.logMetrics(i + 1, { 'rollout/successRate': v });
  store.logEvent(2, 'horizon/stage', 'horizon 0 -> 1', { horizon: 4 });
  store.close();
  return dir;
}

/** Width and height from a PNG's IHDR chunk. */
const pngSize = (png: Buffer) => [png.readUInt32BE(16), png.readUInt32BE(20)];

describe('plotSeries', () => {
  it('draws each series, its band and the markers into an SVG', () => {
    const svg = plotSeries({
      title: 'success',
      xLabel: 'step',
      yLabel: 'rate',
      width: 400,
      height: 300,
      markers: [{ x: 1, label: 'H=7' }],
      series: [
        { label: 'stepwise', points: [{ x: 0, y: 0.1 }, { x: 1, y: 0.4 }, { x: 2, y: 0.6 }], band: [{ x: 0, min: 0, max: 0.2 }, { x: 1, min: 0.3, max: 0.5 }, { x: 2, min: 0.5, max: 0.7 }] },
        { label: 'fixed', points: [{ x: 0, y: 0.2 }, { x: 2, y: Number.NaN }] },
      ],
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('width="400"');
    for (const text of ['stepwise', 'fixed', 'H=7', 'success']) expect(svg).toContain(text);
    expect(svg).toMatch(/fill-opacity="0\.2"/); // the band's shaded area
    expect(() => plotSeries({ series: [] })).toThrow(/series/);
  });

  it('labels tiny values as exponents and steps as whole numbers', () => {
    const svg = plotSeries({ xLabel: 'step', series: [{ label: 'kl', points: [{ x: 1, y: 0 }, { x: 2, y: 0 }, { x: 3, y: -1.2548e-8 }] }] });
    const labels = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(labels).toContain('-1.2e-8');
    expect(labels.filter((l) => /^-?0\.0{4,}/.test(l ?? ''))).toEqual([]);
    expect(labels).toEqual(expect.arrayContaining(['1', '2', '3']));
    expect(labels.filter((l) => /^\d+\.\d+$/.test(l ?? ''))).toEqual([]); // no 1.5, 2.5 or 23.00 step ticks
  });

  it('smooths each line over its faint raw one, and draws a log axis in powers of ten', () => {
    const points = [1, 2, 3, 4, 5].map((x) => ({ x, y: x === 2 ? 0 : 10 ** -x }));
    const plain = plotSeries({ series: [{ label: 'kl', points }] });
    const smoothed = plotSeries({ series: [{ label: 'kl', points }], smoothing: 0.9 });
    expect(plain).not.toMatch(/stroke-opacity="0\.3"/);
    expect(smoothed).toMatch(/stroke-opacity="0\.3"/); // the faint raw line behind the smoothed one
    const log = plotSeries({ series: [{ label: 'kl', points }], logY: true });
    const labels = [...log.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1] ?? '');
    expect(labels).toEqual(expect.arrayContaining(['1e-5', '1e-4', '0.001', '0.01', '0.1']));
    expect(labels.filter((l) => /^0\.000/.test(l))).toEqual([]);
    expect(() => plotSeries({ series: [{ label: 'a', points, band: [{ x: 1, min: 0, max: 1 }] }], logY: true })).toThrow(/log axis/);
    expect(() => plotSeries({ series: [{ label: 'a', points }], smoothing: 1 })).toThrow(/smoothing/);
  });

  it('rasterises to a PNG of the requested size times the scale', () => {
    const png = svgToPng(plotSeries({ series: [{ label: 'a', points: [{ x: 0, y: 1 }, { x: 1, y: 2 }] }], width: 300, height: 200 }), { scale: 2 });
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(pngSize(png)).toEqual([600, 400]);
  });
});

describe('turnwise plot', () => {
  it('writes an SVG of a metric alias over runs, and a PNG band over them', async () => {
    const a = makeRun('seed-a', [0.2, 0.4, 0.6]);
    const b = makeRun('seed-b', [0.4, 0.6, 0.8]);
    const svgPath = await plotCommand([a, b], { metric: 'success', out: join(root, 'curves.svg') });
    const svg = readFileSync(svgPath, 'utf8');
    expect(svg).toContain('seed-a');
    expect(svg).toContain('seed-b');
    expect(svg).toContain('H=4');
    const pngPath = await plotCommand([a, b], { metric: 'rollout/successRate', out: join(root, 'band.png'), band: true, width: 320, height: 240 });
    expect(pngSize(readFileSync(pngPath))).toEqual([640, 480]);
  });

  it('names the metric or file at fault', async () => {
    const a = makeRun('seed-c', [0.1]);
    await expect(plotCommand([a], { metric: 'nope', out: join(root, 'x.svg') })).rejects.toThrow(/no metric 'nope'.*rollout\/successRate/);
    await expect(plotCommand([a], { metric: 'success', out: join(root, 'x.pdf') })).rejects.toThrow(/--out/);
  });
});
