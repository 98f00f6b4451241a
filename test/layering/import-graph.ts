/**
 * A small reader of the import graph of `src/`: every relative `import … from`, `export … from`,
 * side-effect `import '…'` and literal `import('…')` of each TypeScript file, resolved to the file it
 * names (`.js` specifiers mean the `.ts` source, as under NodeNext resolution). Type-only imports
 * count: a layer that needs another's types depends on it. Package imports are left out.
 *
 * It reads text, not a syntax tree (TypeScript 7 ships no compiler API to Node), so it only counts a
 * statement that starts a line; doc comments quoting an import (` * import …`) are not statements.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Relative-path file -> files it imports (both relative to the root, `/`-separated). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const STATIC_IMPORT = /^\s*(?:import|export)\s[^'"();]*?\bfrom\s*['"]([^'"]+)['"]/gm;
const SIDE_EFFECT_IMPORT = /^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /^(?!\s*(?:\*|\/\/)).*?\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The relative specifiers one file's text imports, in order of appearance per kind. */
export function importSpecifiers(text: string): string[] {
  const found: string[] = [];
  for (const pattern of [STATIC_IMPORT, SIDE_EFFECT_IMPORT, DYNAMIC_IMPORT]) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1];
      if (specifier?.startsWith('.')) found.push(specifier);
    }
  }
  return found;
}

function typeScriptFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist') typeScriptFiles(path, out);
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Reads the import graph of every `.ts` file under `root/folder`. */
export function readImportGraph(root: string, folder: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of typeScriptFiles(join(root, folder)).sort()) {
    const targets = importSpecifiers(readFileSync(file, 'utf8')).map((specifier) =>
      relative(root, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))).split('\\').join('/'),
    );
    graph.set(relative(root, file).split('\\').join('/'), [...new Set(targets)]);
  }
  return graph;
}

/**
 * Strongly connected components with more than one file, or a file importing itself (Tarjan):
 * each is an import cycle, listed in a stable order.
 */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (;;) {
      const top = stack.pop() as string;
      onStack.delete(top);
      component.push(top);
      if (top === file) break;
    }
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}
