import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const FOLDERS = ['src', 'test', 'bench', 'scripts', 'examples', 'configs', 'native', '.ci', 'docs'];
const FILES = ['README.md', 'package.json', 'vitest.config.ts', 'tsconfig.json', 'biome.json'];
const TEXT = /\.(ts|mts|mjs|js|json|md|yaml|yml|c|h|html|css)$|^run$/;

// Documents that live beside the repository, not in it: the code must not send a reader there.
// Spelled in pieces so this file does not match itself.
const OUTSIDE = [['STYLE', '.md'], ['STYLE', ' §'], ['DESIGN', '.md'], ['../', 'shared'], ['shared/', 'reference'], ['shared/', 'fixtures'], ['platform', '-notes']].map((p) => p.join(''));

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist' && name !== 'build') files(path, out);
    } else if (TEXT.test(name)) out.push(path);
  }
  return out;
}

describe('the repository stands on its own', () => {
  it('points no reader to a document outside the repository', () => {
    const paths = [...FOLDERS.flatMap((f) => files(join(root, f))), ...FILES.map((f) => join(root, f))];
    expect(paths.length).toBeGreaterThan(300);
    const hits = paths.flatMap((path) => {
      const text = readFileSync(path, 'utf8');
      return OUTSIDE.filter((needle) => text.includes(needle)).map((needle) => `${relative(root, path)}: ${needle}`);
    });
    expect(hits).toEqual([]);
  });
});
