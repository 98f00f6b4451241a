/**
 * `npm run bench -- scale [--quick] [--only training,sampling,concurrency,agents,decode]` (issues #10, #20):
 * in one run, training tokens/s against PyTorch on this machine (two shapes), sampling tokens/s
 * batched (B = 64) against one episode at a time, 10,000 concurrent BabyAI episodes with a scripted
 * policy (turns/s, resident memory, the runtime's cost per turn), and 2,000 / 10,000 agents driven
 * by a trained checkpoint (turns/s, event-loop lag), and batched decoding at the SmolLM2-135M shape
 * (B = 1, 16, 64 against PyTorch). Each part lives in bench/scale/<part>.ts and prints ratios next to absolutes,
 * since the machine is shared.
 */
import { loadavg } from 'node:os';
import type { ScaleOptions, ScaleSection } from './scale/section.js';

const parts = ['training', 'sampling', 'concurrency', 'agents', 'decode'] as const;
type Part = (typeof parts)[number];

function parseArgs(args: string[]): { options: ScaleOptions; only: Part[] } {
  let quick = false;
  let only: Part[] = [...parts];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--only') {
      const names = (args[++i] ?? '').split(',').filter(Boolean);
      const unknown = names.filter((n) => !(parts as readonly string[]).includes(n));
      if (names.length === 0 || unknown.length > 0) {
        throw new Error(`--only: expected a comma-separated subset of ${parts.join(', ')}, got "${args[i] ?? ''}"`);
      }
      only = names as Part[];
    } else throw new Error(`unknown argument "${arg}" (expected --quick or --only <parts>)`);
  }
  return { options: { quick }, only };
}

function print(section: ScaleSection): void {
  const width = Math.max(...section.rows.map(([figure]) => figure.length));
  console.log(`\n## ${section.title}`);
  for (const [figure, value] of section.rows) console.log(`  ${figure.padEnd(width)}  ${value}`);
  for (const note of section.notes ?? []) console.log(`  - ${note}`);
}

export async function main(args: string[]): Promise<void> {
  const { options, only } = parseArgs(args);
  console.log(`scale bench: ${only.join(', ')}${options.quick ? ' (quick)' : ''}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const part of only) {
    // Each part is imported on its own so one part's heavy setup (tfjs, workers) stays out of the others.
    const mod = (await import(`./scale/${part}.ts`)) as { measure: (o: ScaleOptions) => Promise<ScaleSection> };
    print(await mod.measure(options));
  }
  console.log(`\nload average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}
