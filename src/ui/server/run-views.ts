/**
 * What the dashboard's JSON API returns for a run and for an episode's turns: plain JSON shaped
 * from the run store's records (typed arrays become number arrays, NaN becomes null).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Tokenizer } from '../../models/tokenizer/contract.js';
import { loadTokenizer } from '../../models/tokenizer/index.js';
import type { EpisodeRecord, MetricPoint, RunStore, StoredTurn } from '../../store/run-store.js';
import { runLiveness } from '../../runtime/run-lock.js';
import type { IndexedRun } from './run-index.js';

/** A run in the run list. */
export interface RunSummary {
  readonly id: string;
  readonly folder: string;
  readonly runId: string;
  readonly name: string;
  /** running, completed, failed, interrupted, or stale (marked running, but its writer is gone). */
  readonly status: string;
  readonly backend: string;
  readonly seed: number;
  readonly createdAt: number;
  /** `train` for training runs, `eval` for `turnwise eval` harness runs. */
  readonly kind: 'train' | 'eval';
  readonly env: string | null;
  readonly algorithm: string | null;
  /** Configured training steps (train runs). */
  readonly totalSteps: number | null;
  /** Newest value of every metric, `[step, value]` (value null for NaN). */
  readonly latest: Record<string, [number, number | null]>;
  readonly config: unknown;
  /** The run's AgentGym server health reports (`agentgym/health` events): how many, and the newest. */
  readonly health: { readonly reports: number; readonly latest: { readonly step: number; readonly kind: string; readonly message: string } | null };
}

/** A turn as the trajectory viewer shows it. */
export interface TurnView {
  readonly index: number;
  /** The environment's text rendering the agent saw before acting. */
  readonly observation: string;
  readonly action: string;
  readonly reward: number;
  readonly policyVersion: number;
  /** Learner version when this turn was trained on minus `policyVersion`; null for episodes never trained on (test/eval). */
  readonly staleness: number | null;
  readonly promptTokenCount: number;
  /** [actionLen] */
  readonly actionTokens: number[];
  /** [actionLen] decoded text of each action token (null when the run folder has no tokenizer). */
  readonly actionPieces: string[] | null;
  /** [actionLen] behaviour log-probs. */
  readonly logprobs: (number | null)[];
  /** [actionLen] 1 where the token is trained on. */
  readonly lossMask: number[];
  readonly invalid: boolean;
  /** The process-reward hook's reward for this turn; null when the run had none. */
  readonly shapedReward: number | null;
  /** [actionLen] entropy (nats) of each token's sampling distribution; null when not recorded. */
  readonly entropies: (number | null)[] | null;
  /**
   * Index among the action tokens of the token this turn's reward is credited on (its last
   * trained token), or null when every token was forced (the reward then moves back to the
   * previous turn's last trained token).
   */
  readonly creditToken: number | null;
}

const num = (v: number): number | null => (Number.isFinite(v) ? v : null);

type JsonObject = Record<string, unknown>;
const objectAt = (value: unknown, key: string): JsonObject | null => {
  const v = value !== null && typeof value === 'object' ? (value as JsonObject)[key] : undefined;
  return v !== null && typeof v === 'object' ? (v as JsonObject) : null;
};
const stringAt = (value: JsonObject | null, key: string): string | null => (typeof value?.[key] === 'string' ? (value[key] as string) : null);

/**
 * The run-list entry of an indexed run.
 * @example summarizeRun(index.open('babyai-grpo').run, store).latest['rollout/successRate'] // [60, 0.9]
 */
export function summarizeRun(run: IndexedRun, store: RunStore): RunSummary {
  const config = run.record.config;
  const evalSetup = objectAt(config, 'eval');
  const latest: Record<string, [number, number | null]> = {};
  for (const [name, point] of Object.entries(store.latestMetrics())) latest[name] = [point.step, num(point.value)];
  const steps = objectAt(config, 'train')?.steps;
  const reports = store.events('agentgym/health');
  const newest = reports.at(-1);
  return {
    id: run.id,
    folder: run.folder,
    runId: run.record.id,
    name: run.record.name,
    // A run marked running whose writer died shows as 'stale' (src/runtime/run-lock.ts).
    status: runLiveness(run.dir, run.record.status).status,
    backend: run.record.backend,
    seed: run.record.seed,
    createdAt: run.record.createdAt,
    kind: evalSetup ? 'eval' : 'train',
    env: stringAt(objectAt(config, 'env'), 'name') ?? stringAt(evalSetup, 'env'),
    algorithm: stringAt(objectAt(config, 'algorithm'), 'name'),
    totalSteps: typeof steps === 'number' ? steps : null,
    latest,
    config,
    health: {
      reports: reports.length,
      latest: newest === undefined ? null : { step: newest.step, kind: stringAt(newest.data as JsonObject | null, 'kind') ?? 'report', message: newest.message },
    },
  };
}

/**
 * Metric series as `[step, value]` pairs (value null for NaN), which ECharts plots directly.
 * @example seriesJson(store.metricsSeries('loss/policy')) // [[1, 0.12], [2, null]]
 */
export function seriesJson(points: readonly MetricPoint[]): [number, number | null][] {
  return points.map((p) => [p.step, num(p.value)]);
}

/** Loads each run folder's tokenizer once, to show the text of every action token. */
export class TokenizerCache {
  private readonly cache = new Map<string, Promise<Tokenizer | null>>();

  /**
   * The tokenizer of a run folder, or null when it has none or it cannot be read. Keyed by the run
   * too: a folder replaced by another run (`train --force`) may hold another tokenizer.
   */
  get(runDir: string, runId: string): Promise<Tokenizer | null> {
    const key = `${runDir}\0${runId}`;
    let entry = this.cache.get(key);
    if (entry === undefined) {
      const path = join(runDir, 'tokenizer.json');
      entry = existsSync(path) ? loadTokenizer(path).catch(() => null) : Promise.resolve(null);
      this.cache.set(key, entry);
    }
    return entry;
  }
}

/**
 * An episode's turns for the viewer. `learnerVersion` is the learner's weights version when the
 * episode was trained on (null: never trained on), so staleness = learnerVersion - policyVersion.
 * @example turnViews(store.episodeTurns('s0/t0/g0'), 0, tokenizer)[0].staleness // 0
 */
export function turnViews(turns: readonly StoredTurn[], learnerVersion: number | null, tokenizer: Tokenizer | null): TurnView[] {
  return turns.map((t) => ({
    index: t.index,
    observation: t.observationText,
    action: t.actionText,
    reward: t.reward,
    policyVersion: t.policyVersion,
    staleness: learnerVersion === null ? null : learnerVersion - t.policyVersion,
    promptTokenCount: t.promptTokens.length,
    actionTokens: Array.from(t.actionTokens),
    actionPieces: tokenizer ? Array.from(t.actionTokens, (id) => tokenizer.decode([id], true)) : null,
    logprobs: Array.from(t.actionLogprobs, num),
    lossMask: Array.from(t.actionLossMask),
    invalid: t.invalidAction,
    shapedReward: t.shapedReward ?? null,
    entropies: t.entropies === undefined ? null : Array.from(t.entropies, num),
    creditToken: lastTrained(t.actionLossMask),
  }));
}

function lastTrained(mask: Uint8Array): number | null {
  for (let j = mask.length - 1; j >= 0; j--) if (mask[j] !== 0) return j;
  return null;
}

/**
 * The learner's version when it trained on a train-split episode of `step`: the `policy/version`
 * metric logged at `step` (the version after step - 1's update), 0 before any update.
 * @example learnerVersionAt(store, episode) // 3
 */
export function learnerVersionAt(store: RunStore, episode: EpisodeRecord): number | null {
  if (episode.split !== 'train') return null;
  if (episode.step === 0) return 0;
  const point = store.metricsSeries('policy/version').find((p) => p.step === episode.step);
  return point && Number.isFinite(point.value) ? point.value : null;
}
