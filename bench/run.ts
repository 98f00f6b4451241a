/**
 * `npm run bench -- NAME`: runs bench/NAME.ts, which prints its figures and comparisons.
 * Benchmarks report ratios next to absolute numbers because these machines are shared and noisy.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace(/\.bench\.ts$/, ''))
  .sort();
const name = process.argv[2];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <name>\navailable: ${available.join(', ')}`);
  process.exit(2);
}
const mod = (await import(join(here, `${name}.bench.ts`))) as { main: (args: string[]) => Promise<void> };
await mod.main(process.argv.slice(3));
