import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importSpecifiers, readImportGraph } from './import-graph.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const graph = readImportGraph(root, 'src');

/**
 * The layers of `src/`, lowest first (docs/layout.md): every top-level entry of `src/` is on one
 * rank, and nothing else is. A file may import its own folder and any lower layer; two folders on
 * the same rank never import each other. The tensor backend (`backend/`: tfjs and the native addon)
 * sits below everything that computes on it; the bus (`bus/`: in-process and NATS) below the runtime
 * that wires actors to it; the learner (`learner/`) above the models it trains; the model engines
 * (`engines/`: the in-process tfjs engine and the Tinker client) above the learner and below the
 * runtime that drives them.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['backend'],
  ['algorithms', 'envs', 'store', 'policies', 'bus'],
  ['models', 'actors'],
  ['learner'],
  ['engines'],
  ['runtime'],
  ['eval', 'serve'],
  ['ui'],
  ['experiments'],
  ['cli'],
  ['index.ts'],
];

/** The top-level entry of `src/` a `src/…` path belongs to and its rank. */
function layerOf(path: string): { folder: string; rank: number } {
  const folder = path.replace(/^src\//, '').split('/')[0] as string;
  const rank = LAYERS.findIndex((folders) => folders.includes(folder));
  if (rank < 0) throw new Error(`${path} is in no layer: add ${folder} to LAYERS`);
  return { folder, rank };
}

/** Every import of one `src/` TypeScript file by another (data files such as JSON left out). */
function edges(): { from: string; to: string }[] {
  return [...graph].flatMap(([from, targets]) => targets.filter((to) => to.startsWith('src/') && to.endsWith('.ts')).map((to) => ({ from, to })));
}

describe('import graph of src/', () => {
  it('reads static, re-export, side-effect and dynamic imports but not quoted ones in comments', () => {
    const text = [
      "import { a } from './a.js';",
      'import type {',
      '  B,',
      "} from '../b.js';",
      "export { c } from './c.js';",
      "import './d.js';",
      "const e = await import('./e.js');",
      " * `import { f } from './f.js'` in a doc comment",
      "// const g = await import('./g.js');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(importSpecifiers(text).sort()).toEqual(['../b.js', './a.js', './c.js', './d.js', './e.js']);
  });

  it('finds an import cycle when one exists and names its files', () => {
    const cyclic = new Map([
      ['src/a.ts', ['src/b.ts']],
      ['src/b.ts', ['src/c.ts']],
      ['src/c.ts', ['src/a.ts']],
      ['src/d.ts', ['src/a.ts']],
    ]);
    expect(importCycles(cyclic)).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts']]);
    expect(importCycles(new Map([['src/a.ts', ['src/b.ts']], ['src/b.ts', []]]))).toEqual([]);
  });

  it('sees the imports it should (the reader is not silently empty)', () => {
    expect(graph.size).toBeGreaterThan(250);
    expect(graph.get('src/learner/trainer.ts')).toContain('src/learner/train-contract.ts');
    expect(graph.get('src/runtime/eval-run.ts')).toContain('src/runtime/agents.ts');
    expect(graph.get('src/cli/experiment-command.ts')).toContain('src/experiments/horizon/index.ts');
    for (const { to } of edges()) expect(graph.has(to), `${to} is imported but not found`).toBe(true);
  });

  it('gives every top-level entry of src/ exactly one layer, and lists nothing else', () => {
    const listed = LAYERS.flat();
    expect([...listed].sort()).toEqual(readdirSync(`${root}src`).sort());
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('has no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('imports only downwards: a lower layer never imports a higher one, and peer folders stay apart', () => {
    const violations = edges().flatMap(({ from, to }) => {
      const a = layerOf(from);
      const b = layerOf(to);
      const allowed = a.folder === b.folder || b.rank < a.rank;
      return allowed ? [] : [`${from} (${a.folder}) imports ${to} (${b.folder})`];
    });
    expect(violations).toEqual([]);
  });

  it('keeps the rules of the design: algorithms import no actor and no bus, envs import no model, actors no model', () => {
    const bad = edges().filter(
      ({ from, to }) =>
        (from.startsWith('src/algorithms/') && (to.startsWith('src/actors/') || to.startsWith('src/bus/') || to.startsWith('src/runtime/'))) ||
        (from.startsWith('src/envs/') && to.startsWith('src/models/')) ||
        (from.startsWith('src/actors/') && to.startsWith('src/models/')),
    );
    expect(bad).toEqual([]);
  });
});
