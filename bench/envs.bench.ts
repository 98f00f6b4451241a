/**
 * `npm run bench -- envs [name...]`: steps/s of every registered environment with random valid
 * actions (picked from `availableActions`), in-process, one core — per CPU-second of this process
 * (stable on a shared machine) and per wall-second, over 3 s after 1 s of untimed warm-up. Episodes restart on done with the
 * next train task. Reference points from the issues (measured on this kind of machine): AgentGym's
 * BabyAI environment class 65–180 steps/s, Minigrid's raw grid 3,200–5,700; AgentGym's TextCraft
 * 40,000–290,000.
 *
 * BabyAI runs in three settings (issue #18): Minigrid's generator with turnwise's text (the
 * default), turnwise's earlier generator with the same text (the reference of the "within 2x of the
 * cost per step" bar), and Minigrid's generator with AgentGym's text; each row gives its cost per
 * step relative to the turnwise generator's. Every row is measured twice, in turn, and the faster
 * run kept.
 */
import { performance } from 'node:perf_hooks';
import { Rng } from '../src/core/rng.js';
import type { Observation, StepResult } from '../src/core/types.js';
import '../src/envs/index.js';
import { listEnvironments } from '../src/envs/registry.js';

const SECONDS = 3;
/** Untimed run first, so the numbers are steady-state throughput rather than JIT warm-up. */
const WARMUP_SECONDS = 1;
const TARGETS: Record<string, string> = { babyai: '>= 20,000 (issue #5)', textcraft: '>= 40,000 (issue #5)' };

/** One row of the table: an environment, optionally with settings. */
interface Variant {
  readonly name: string;
  readonly label: string;
  readonly settings?: Readonly<Record<string, unknown>>;
}

const BABYAI_VARIANTS: readonly Variant[] = [
  { name: 'babyai', label: 'babyai (all 40 levels; minigrid generator, turnwise text: the default)' },
  { name: 'babyai', label: 'babyai (turnwise generator, turnwise text)', settings: { generator: 'turnwise' } },
  { name: 'babyai', label: 'babyai (minigrid generator, agentgym text)', settings: { textProfile: 'agentgym' } },
];
const REFERENCE_LABEL = 'babyai (turnwise generator, turnwise text)';

async function measure(variant: Variant): Promise<{ steps: number; resets: number; perSec: number; perCpuSec: number; note: string }> {
  const { name } = variant;
  const spec = listEnvironments().find((s) => s.name === name);
  if (!spec) throw new Error(`unknown environment ${name}`);
  const options = variant.settings ? { settings: variant.settings } : {};
  const env = spec.create(options);
  const indices = spec.catalog(options).indices('train');
  const rng = Rng.fromSeed(11);
  let task = 0;
  let obs: Observation = await env.reset(indices[task % indices.length] as number);
  let steps = 0;
  let resets = 1;
  let start = performance.now();
  let cpuStart = process.cpuUsage();
  let warm = false;
  for (;;) {
    const elapsed = performance.now() - start;
    if (!warm && elapsed >= WARMUP_SECONDS * 1000) {
      warm = true;
      steps = 0;
      resets = 0;
      start = performance.now();
      cpuStart = process.cpuUsage();
    } else if (warm && elapsed >= SECONDS * 1000) break;
    const actions = obs.availableActions;
    const action = actions && actions.length > 0 ? rng.pick(actions) : 'look';
    const result: StepResult = await env.step(action);
    steps++;
    obs = result.observation;
    if (result.done || steps % 200 === 0) {
      task++;
      resets++;
      obs = await env.reset(indices[task % indices.length] as number);
    }
  }
  const perSec = steps / ((performance.now() - start) / 1000);
  // CPU time of this (single-threaded) loop: robust to other jobs on a shared machine.
  const cpu = process.cpuUsage(cpuStart);
  const perCpuSec = steps / ((cpu.user + cpu.system) / 1e6);
  await env.close();
  return { steps, resets, perSec, perCpuSec, note: TARGETS[name] ?? '' };
}

export async function main(args: string[]): Promise<void> {
  const names = args.length > 0 ? args : listEnvironments().map((s) => s.name).filter((n) => n !== 'agentgym');
  const variants = names.flatMap((name) => (name === 'babyai' ? BABYAI_VARIANTS : [{ name, label: name }]));
  const results = new Map<string, Awaited<ReturnType<typeof measure>>>();
  // Two rounds, in turn, keeping each row's faster one: on a shared machine a single window is
  // noisy, and the first row measured would pay for warming up code the others share.
  for (let round = 0; round < 2; round++) {
    for (const v of variants) {
      try {
        const r = await measure(v);
        const best = results.get(v.label);
        if (best === undefined || r.perCpuSec > best.perCpuSec) results.set(v.label, r);
      } catch (err) {
        console.log(`${v.label}: failed: ${(err as Error).message}`);
      }
    }
  }
  const reference = results.get(REFERENCE_LABEL);
  console.log(`| environment | steps per CPU-second | steps per wall-second | episodes started | CPU per step vs turnwise generator | target |`);
  console.log('|---|---|---|---|---|---|');
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  for (const v of variants) {
    const r = results.get(v.label);
    if (r === undefined) continue;
    const ratio = v.name === 'babyai' && reference ? `${(reference.perCpuSec / r.perCpuSec).toFixed(2)}x` : '';
    console.log(`| ${v.label} | ${fmt(r.perCpuSec)} | ${fmt(r.perSec)} | ${r.resets} | ${ratio} | ${r.note} |`);
  }
}
