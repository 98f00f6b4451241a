/**
 * `npm run docs`: regenerates the tables of `docs/` that come from code (config fields in
 * docs/configuration.md, metrics in docs/metrics.md, environments in docs/environments.md)
 * between their `<!-- name:start -->` / `<!-- name:end -->` markers.
 * `npm run docs -- --check` exits 1 when a page is stale (a unit test runs the same check).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { docSections, replaceSections } from '../src/cli/doc-sections.js';

const check = process.argv.includes('--check');
let stale = 0;
for (const [page, sections] of Object.entries(docSections())) {
  const path = new URL(`../${page}`, import.meta.url);
  const current = readFileSync(path, 'utf8');
  const next = replaceSections(current, sections, page);
  if (next === current) {
    console.log(`${page} is up to date`);
  } else if (check) {
    console.error(`${page} is stale: run \`npm run docs\``);
    stale++;
  } else {
    writeFileSync(path, next);
    console.log(`${page} updated`);
  }
}
if (stale > 0) process.exit(1);
