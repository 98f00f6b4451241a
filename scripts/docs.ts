/**
 * `npm run docs`: regenerates the README tables that come from code (config fields, metrics,
 * environments) between their `<!-- name:start -->` / `<!-- name:end -->` markers.
 * `npm run docs -- --check` exits 1 when the README is stale (a unit test runs the same check).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readmeSections, replaceSections } from '../src/cli/readme-sections.js';

const path = new URL('../README.md', import.meta.url);
const current = readFileSync(path, 'utf8');
const next = replaceSections(current, readmeSections());
if (process.argv.includes('--check')) {
  if (next !== current) {
    console.error('README.md is stale: run `npm run docs`');
    process.exit(1);
  }
  console.log('README.md is up to date');
} else {
  writeFileSync(path, next);
  console.log(next === current ? 'README.md unchanged' : 'README.md updated');
}
