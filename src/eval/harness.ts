/**
 * The evaluation harness: several policies (checkpoints, remote models) on the same episodes of an
 * environment split, n samples per item, scored as AgentGym-RL scores them (Avg@n, Pass@n,
 * overall and per category; see `metrics.ts`), and stored like a run — a run folder whose
 * `run.db` holds one run per policy with its episodes (split `eval`), metrics and token usage —
 * so the viewer shows the trajectories.
 *
 * Same episodes for every policy: item `i`, sample `s` always gets the seed
 * `Rng.fromSeed(seed).fork('eval/<split>/<i>', s)`, and each turn derives its sampling seed from it
 * (token and text paths alike), so differences between rows come from the policies.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Clock, systemClock } from '../core/clock.js';
import type { ResolvedConfig } from '../core/config.js';
import { InvalidArgumentError, TurnwiseError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import type { Split, Trajectory } from '../core/types.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import type { OpenAIChatDeps, UsageReport } from '../policies/openai-chat.js';
import type { EpisodePlan } from '../runtime/rollout.js';
import { freshRunDir } from '../runtime/run-folder.js';
import { RunStore } from '../store/run-store.js';
import { checkpointConfig, openAgent } from '../runtime/agents.js';
import { type EvalSummary, sampleOf, summarizeEval } from './metrics.js';
import { type PolicySpec, uniqueNames } from '../runtime/policy-spec.js';
import { markdownReport } from './report.js';

/** AgentGym-RL's eval scripts cap BabyAI / SciWorld / TextCraft at 20–30 rounds (reference §2.7). */
export const DEFAULT_EVAL_HORIZON = 20;

/** What to evaluate and where. */
export interface EvalHarnessOptions {
  readonly policies: readonly PolicySpec[];
  /** Environment (default: the first checkpoint's). Required when every policy is remote. */
  readonly env?: string;
  /** Environment settings (default: the first checkpoint's, else the environment's defaults). */
  readonly envSettings?: Readonly<Record<string, unknown>>;
  readonly split: Split;
  /** Items: the first `tasks` of the split (default: the first checkpoint's `train.evalTasks`, else all). */
  readonly tasks?: number;
  /** Samples per item (the n of Avg@n / Pass@n). */
  readonly samples: number;
  /** Episode seeds (default: the first checkpoint's seed, else 0). */
  readonly seed?: number;
  /** Max agent turns (default: the first checkpoint's largest horizon, else {@link DEFAULT_EVAL_HORIZON}). */
  readonly horizon?: number;
  /** Run folder to write (default: a fresh `runs/eval-<env>[-k]`). */
  readonly runDir?: string;
  readonly clock?: Clock;
  /** Wall time in ms since the epoch, for the run records. */
  readonly wallClockMs?: () => number;
  readonly remoteDeps?: OpenAIChatDeps;
  /** Called after each policy finishes. */
  readonly onPolicyDone?: (result: PolicyEvalResult) => void;
}

/** One row of the comparison. */
export interface PolicyEvalResult {
  readonly name: string;
  readonly kind: PolicySpec['kind'];
  readonly description: string;
  readonly summary: EvalSummary;
  /** Remote policies: requests, retries and tokens in total (per episode in the run store). */
  readonly usage: Omit<UsageReport, 'perEpisode'> | null;
  readonly seconds: number;
  readonly trajectories: readonly Trajectory[];
}

/** The whole comparison. */
export interface EvalReport {
  readonly env: string;
  readonly split: Split;
  readonly tasks: number;
  readonly samples: number;
  readonly seed: number;
  readonly horizon: number;
  readonly runDir: string;
  readonly policies: readonly PolicyEvalResult[];
}

/**
 * The episodes every policy plays: `samples` per item of the split's first `tasks` items.
 * @example evalPlans('babyai', [3, 7], 'test', 2, 0).map((p) => p.trajectoryId) // ['test/0/s0', 'test/0/s1', 'test/1/s0', 'test/1/s1']
 */
export function evalPlans(env: string, indices: readonly number[], split: Split, samples: number, seed: number): EpisodePlan[] {
  const root = Rng.fromSeed(seed);
  const plans: EpisodePlan[] = [];
  indices.forEach((taskIndex, i) => {
    for (let s = 0; s < samples; s++) {
      plans.push({
        taskId: `${env}_${taskIndex}`,
        taskIndex,
        groupId: `${split}/${i}`,
        trajectoryId: `${split}/${i}/s${s}`,
        seed: root.fork(`eval/${split}/${i}`, s).int(0x7fffffff),
      });
    }
  });
  return plans;
}

const storeId = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * Every episode of a policy ended in error (after the client's retries): the endpoint or the
 * environment is down. What was evaluated so far stays in the run folder.
 * @example new PolicyUnavailableError('qwen', 'http://127.0.0.1:1/v1 (model q)', 8, 'act failed: Connection error.', 'runs/eval-babyai')
 */
export class PolicyUnavailableError extends TurnwiseError {
  constructor(
    readonly policy: string,
    description: string,
    episodes: number,
    readonly firstError: string,
    kept: string,
  ) {
    super(`policy '${policy}' (${description}): every episode ended in error (${episodes} of ${episodes}) after the client's retries; the first: ${firstError.replace(/\.+$/, '')}. Is it up? Results so far are in ${kept}`);
  }
}

/**
 * Runs the comparison, stores it, and returns the report.
 * @example const report = await evaluatePolicies({ policies: [checkpointSpec('runs/babyai-grpo')], split: 'test', samples: 4 });
 */
export async function evaluatePolicies(options: EvalHarnessOptions): Promise<EvalReport> {
  if (options.policies.length === 0) throw InvalidArgumentError.format('policies', 'give at least one --policy, --remote or --policies file');
  if (!Number.isInteger(options.samples) || options.samples < 1) throw InvalidArgumentError.format('samples', `expected an integer >= 1, got ${options.samples}`);
  uniqueNames(options.policies);
  const clock = options.clock ?? systemClock;
  const wall = options.wallClockMs ?? Date.now;

  const first = options.policies.find((p) => p.kind === 'checkpoint');
  const base: ResolvedConfig | null = first?.kind === 'checkpoint' ? (await checkpointConfig(first.location)).config : null;
  const envName = options.env ?? base?.env.name;
  if (envName === undefined) throw InvalidArgumentError.format('--env', 'required when no policy is a turnwise checkpoint (which names its environment)');
  const spec = getEnvironmentSpec(envName);
  const envSettings = options.envSettings ?? (base && base.env.name === envName ? base.env.settings : {});
  const catalog = spec.catalog({ settings: envSettings });
  const all = catalog.indices(options.split);
  const tasks = Math.min(options.tasks ?? base?.train.evalTasks ?? all.length, all.length);
  const seed = options.seed ?? base?.seed ?? 0;
  const horizon = options.horizon ?? base?.derived.maxHorizon ?? DEFAULT_EVAL_HORIZON;
  if (!Number.isInteger(horizon) || horizon < 1) throw InvalidArgumentError.format('horizon', `expected an integer >= 1, got ${horizon}`);
  const indices = all.slice(0, tasks);
  const plans = evalPlans(envName, indices, options.split, options.samples, seed);
  const categoryOf = (taskIndex: number) => catalog.category?.(taskIndex);

  // Fail before creating the run folder when a remote policy's key is missing.
  const env = options.remoteDeps?.env ?? process.env;
  for (const p of options.policies) {
    if (p.kind === 'remote' && p.config.keyEnv !== undefined && !env[p.config.keyEnv]) {
      throw InvalidArgumentError.format(`policies.${p.name}.keyEnv`, `environment variable ${p.config.keyEnv} is not set`);
    }
  }
  const runDir = options.runDir ?? (await freshRunDir('runs', `eval-${envName}`));
  const store = RunStore.open(runDir);
  const results: PolicyEvalResult[] = [];
  try {
    for (const policy of options.policies) {
      const started = clock.now();
      const agent = await openAgent(policy, { spec, envSettings, clock, ...(options.remoteDeps ? { remoteDeps: options.remoteDeps } : {}) });
      let trajectories: Trajectory[];
      try {
        const own = plans.map((p) => ({ ...p, trajectoryId: `${policy.name}/${p.trajectoryId}` }));
        trajectories = await agent.runner.run(0, horizon, own);
      } finally {
        await agent.close();
      }
      const samples = trajectories.map((t, i) => sampleOf(t, categoryOf((plans[i] as EpisodePlan).taskIndex)));
      const summary = summarizeEval(samples);
      const usage = agent.usage();
      const { perEpisode, ...usageTotals } = usage ?? { perEpisode: null };
      const result: PolicyEvalResult = {
        name: policy.name,
        kind: policy.kind,
        description: agent.description,
        summary,
        usage: usage === null ? null : (usageTotals as Omit<UsageReport, 'perEpisode'>),
        seconds: (clock.now() - started) / 1000,
        trajectories,
      };
      // Every episode in error: the endpoint (or the environment) is down. Its episodes are kept, the eval stops.
      const dead = trajectories.length > 0 && trajectories.every((t) => t.outcome === 'error');
      record(store, result, policy, { env: envName, envSettings, split: options.split, tasks, samples: options.samples, seed, horizon }, wall(), perEpisode, dead ? 'failed' : 'completed');
      if (dead) {
        const done = results.length === 0 ? '' : ` (${results.map((r) => r.name).join(', ')} completed)`;
        throw new PolicyUnavailableError(policy.name, agent.description, trajectories.length, trajectories[0]?.error ?? 'no error message', `${runDir}${done}`);
      }
      results.push(result);
      options.onPolicyDone?.(result);
    }
  } finally {
    store.close();
  }
  const report: EvalReport = { env: envName, split: options.split, tasks, samples: options.samples, seed, horizon, runDir, policies: results };
  await writeFile(join(runDir, 'eval.json'), `${JSON.stringify(reportJson(report), null, 2)}\n`);
  await writeFile(join(runDir, 'eval.md'), `${markdownReport(report)}\n`);
  return report;
}

/** Stores one policy's run: episodes (split `eval`), metrics at step 0, usage as an event. */
function record(
  store: RunStore,
  result: PolicyEvalResult,
  policy: PolicySpec,
  setup: Record<string, unknown>,
  createdAt: number,
  perEpisode: UsageReport['perEpisode'] | null,
  status: 'completed' | 'failed',
): void {
  const runId = storeId(result.name);
  const policyConfig = policy.kind === 'checkpoint' ? { kind: policy.kind, checkpoint: policy.location, greedy: policy.greedy } : { kind: policy.kind, ...policy.config };
  store.createRun({ id: runId, name: result.name, createdAt, config: { eval: setup, policy: policyConfig }, backend: policy.kind === 'remote' ? 'remote' : result.description, seed: Number(setup.seed) });
  store.recordTrajectories(runId, 'eval', result.trajectories);
  const metrics: Record<string, number> = {};
  const put = (prefix: string, m: EvalSummary['overall']) => {
    for (const [key, value] of Object.entries(m)) metrics[`${prefix}/${key}`] = value;
  };
  put('eval', result.summary.overall);
  for (const [category, m] of Object.entries(result.summary.perCategory)) put(`eval/${category}`, m);
  if (result.usage) {
    metrics['usage/promptTokens'] = result.usage.promptTokens;
    metrics['usage/completionTokens'] = result.usage.completionTokens;
    metrics['usage/requests'] = result.usage.requests;
    metrics['usage/retries'] = result.usage.retries;
  }
  store.logMetrics(0, metrics);
  if (perEpisode) store.logEvent(0, 'usage/perEpisode', `token usage of ${Object.keys(perEpisode).length} episodes`, perEpisode);
  store.setRunStatus(status);
}

/**
 * The report without trajectories (they are in `run.db`), as `--json` prints it.
 * @example JSON.stringify(reportJson(report))
 */
export function reportJson(report: EvalReport): object {
  return { ...report, policies: report.policies.map(({ trajectories: _t, ...rest }) => rest) };
}
