/**
 * `npm run bench -- quickstart [--rounds N] [--set key=value ...] [--old key=value ...]`: the README quickstart
 * (`turnwise train configs/babyai-grpo.yaml`, compiled `dist/`, so `npm run build` first) as a
 * whole process, with the old settings (`train.dataParallel=1`: gradients in the learner thread;
 * `train.evalOverlap=false`: each evaluation alone; `--old` names other settings for this arm) and the defaults (`auto`: one gradient worker
 * per core; evaluations beside the next step's rollout), interleaved A B B A … so that a change
 * in the machine's load hits both alike. Per setting: wall seconds, CPU seconds (user + system of
 * the finished child, from /proc/self/stat's children times: Linux only), CPU utilisation
 * (CPU / wall), the run's own time/trainSec and time/rolloutSec sums (run.db), and the ratio
 * old / new per pair (median). It also checks that both print the same numbers: every step and
 * eval line with the timing fields (tok/s, elapsed time) taken out.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const root = join(fileURLToPath(import.meta.url), '../..');
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** Seconds of CPU this process's reaped children have used so far (utime + stime of /proc/self/stat). */
function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (which may hold spaces) start at state, field 3; cutime and cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[13]) + Number(fields[14]);
  const hz = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return ticks / hz;
}

interface Sample {
  readonly wall: number;
  readonly cpu: number;
  readonly trainSec: number;
  readonly rolloutSec: number;
  /** The printed step and eval lines without their timing fields. */
  readonly numbers: string;
  readonly header: string;
}

/** The lines a reader compares, without what depends on the clock. */
function printedNumbers(stdout: string): string {
  return stdout
    .split('\n')
    .filter((l) => /^(step \d+\/|eval @ step|held-out success)/.test(l))
    .map((l) => l.replace(/ \| \d+ tok\/s/, '').replace(/ \(\d+m\d+s\)/, ''))
    .join('\n');
}

function runOnce(dir: string, name: string, sets: readonly string[]): Sample {
  const args = ['dist/src/cli/main.js', 'train', 'configs/babyai-grpo.yaml', '--set', `run.dir=${dir}`, '--set', `run.name=${name}`, ...sets.flatMap((s) => ['--set', s])];
  const cpu0 = childrenCpuSeconds();
  const t0 = performance.now();
  const child = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const wall = (performance.now() - t0) / 1000;
  const cpu = childrenCpuSeconds() - cpu0;
  if (child.status !== 0) throw new Error(`${name}: exit ${child.status}\n${child.stderr}\n${child.stdout.slice(-2000)}`);
  const db = new Database(join(dir, name, 'run.db'), { readonly: true });
  const sum = (metric: string): number => (db.prepare('SELECT COALESCE(SUM(value), 0) AS s FROM metrics WHERE name = ?').get(metric) as { s: number }).s;
  const sample = { wall, cpu, trainSec: sum('time/trainSec'), rolloutSec: sum('time/rolloutSec'), numbers: printedNumbers(child.stdout), header: child.stdout.split('\n').find((l) => l.startsWith('backend:')) ?? '' };
  db.close();
  return sample;
}

export async function main(args: string[]): Promise<void> {
  const i = args.indexOf('--rounds');
  const rounds = i >= 0 ? Number(args[i + 1]) : 3;
  if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error(`--rounds: expected a positive integer, got ${args[i + 1]}`);
  const extra = args.flatMap((a, k) => (args[k - 1] === '--set' ? [a] : []));
  // `--old key=value` (repeatable) replaces the old arm's settings, e.g. `--old algorithm.microBatchMultiple=1`.
  const asked = args.flatMap((a, k) => (args[k - 1] === '--old' ? [a] : []));
  const oldSets = asked.length > 0 ? asked : ['train.dataParallel=1', 'train.evalOverlap=false'];
  const settings = [
    { label: `old: ${oldSets.join(', ')}`, sets: [...extra, ...oldSets] },
    { label: 'new: default (auto)', sets: extra },
  ] as const;
  const dir = mkdtempSync(join(tmpdir(), 'turnwise-quickstart-'));
  const samples: Sample[][] = [[], []];
  try {
    console.log(`quickstart (configs/babyai-grpo.yaml${extra.map((s) => ` --set ${s}`).join('')}), ${rounds} rounds, interleaved A B B A …`);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order) {
        const s = runOnce(dir, `r${r}-${k}`, settings[k]?.sets ?? []);
        samples[k]?.push(s);
        console.log(`  round ${r + 1} ${settings[k]?.label}: wall ${s.wall.toFixed(1)} s, CPU ${s.cpu.toFixed(1)} s (${((100 * s.cpu) / s.wall).toFixed(0)} %), trainSec ${s.trainSec.toFixed(1)}, rolloutSec ${s.rolloutSec.toFixed(1)}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const [old, now] = samples as [Sample[], Sample[]];
  console.log(`\nheader (new): ${now[0]?.header}`);
  console.log('\n| setting | wall s | CPU s | CPU use | trainSec | rolloutSec |');
  console.log('|---|---|---|---|---|---|');
  settings.forEach((s, k) => {
    const xs = samples[k] as Sample[];
    const m = (f: (x: Sample) => number) => median(xs.map(f));
    console.log(`| ${s.label} | ${m((x) => x.wall).toFixed(1)} | ${m((x) => x.cpu).toFixed(1)} | ${(100 * m((x) => x.cpu / x.wall)).toFixed(0)} % | ${m((x) => x.trainSec).toFixed(1)} | ${m((x) => x.rolloutSec).toFixed(1)} |`);
  });
  const ratio = median(old.map((o, r) => o.wall / (now[r] as Sample).wall));
  console.log(`\nwall old / new, median of ${rounds} pairs: ${ratio.toFixed(2)}x`);
  const same = [...old, ...now].every((s) => s.numbers === old[0]?.numbers);
  console.log(`printed numbers (every step and eval line, timings out) identical across all ${2 * rounds} runs: ${same ? 'yes' : 'NO'}`);
}
