/** Typed calls to the dashboard's JSON API (see src/ui/server/app.ts). */

export type Point = [number, number | null];

export interface RunSummary {
  id: string;
  folder: string;
  runId: string;
  name: string;
  status: string;
  backend: string;
  seed: number;
  createdAt: number;
  kind: 'train' | 'eval';
  env: string | null;
  algorithm: string | null;
  totalSteps: number | null;
  latest: Record<string, Point>;
  config: unknown;
  /** AgentGym server health reports of the run (`agentgym/health` events): count and newest. */
  health: { reports: number; latest: { step: number; kind: string; message: string } | null };
}

/** Episodes at one step: `total` and a count per outcome that occurs. */
export type StepCounts = { step: number; total: number } & Record<string, number>;

export interface RunEvent {
  step: number;
  kind: string;
  message: string;
  data: unknown;
}

export interface Episode {
  id: string;
  runId: string;
  step: number;
  taskId: string;
  split: string;
  outcome: 'success' | 'failure' | 'truncated' | 'length' | 'error';
  reward: number;
  turns: number;
  horizon: number;
  policyVersionMin: number | null;
  policyVersionMax: number | null;
  error: string | null;
  finalObservation: string;
}

export interface TurnView {
  index: number;
  observation: string;
  action: string;
  reward: number;
  policyVersion: number;
  staleness: number | null;
  promptTokenCount: number;
  actionTokens: number[];
  actionPieces: string[] | null;
  logprobs: (number | null)[];
  lossMask: number[];
  invalid: boolean;
  shapedReward: number | null;
  entropies: (number | null)[] | null;
  creditToken: number | null;
}

export interface EvalMetrics {
  items?: number;
  samples?: number;
  avgAtN?: number;
  passAtN?: number;
  successRate?: number;
  meanTurns?: number;
  truncationRate?: number;
  errorRate?: number;
}

export interface EvalTables {
  kind: 'harness' | 'train';
  setup: unknown;
  tables: { step: number; overall: EvalMetrics; categories: Record<string, EvalMetrics> }[];
}

export interface RunDelta {
  metrics: Record<string, Point[]>;
  events: RunEvent[];
  status: string | null;
}

/** GET a JSON API path; a non-2xx answer throws with the server's message. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path);
  const body = await res.json();
  if (!res.ok) throw new Error(body?.error?.message ?? `${res.status} ${res.statusText}`);
  return body as T;
}

export const enc = encodeURIComponent;

export const api = {
  runs: () => getJson<{ root: string; runs: RunSummary[]; skipped: { folder: string; error: string }[] }>('api/runs'),
  metrics: (id: string, names?: string[]) =>
    getJson<{ names: string[]; series: Record<string, Point[]> }>(`api/runs/${enc(id)}/metrics${names ? `?names=${enc(names.join(','))}` : ''}`),
  events: (id: string) => getJson<{ events: RunEvent[] }>(`api/runs/${enc(id)}/events`),
  /** Every step with `split` episodes: the server lists them a page at a time (`next` starts the following page). */
  episodeSteps: async (id: string, split: string) => {
    const steps: StepCounts[] = [];
    for (let from: number | null = 0; from !== null; ) {
      const page: { steps: StepCounts[]; next: number | null } = await getJson(`api/runs/${enc(id)}/episode-steps?split=${enc(split)}&from=${from}`);
      steps.push(...page.steps);
      from = page.next;
    }
    return { steps };
  },
  episodes: (id: string, q: { step?: number; split?: string; outcome?: string }) => {
    const params = new URLSearchParams({ limit: '500' });
    if (q.step !== undefined) params.set('step', String(q.step));
    if (q.split) params.set('split', q.split);
    if (q.outcome) params.set('outcome', q.outcome);
    return getJson<{ episodes: Episode[] }>(`api/runs/${enc(id)}/episodes?${params}`);
  },
  turns: (run: string, episode: string, step?: number) =>
    getJson<{ episode: Episode; turns: TurnView[] }>(`api/episodes/${enc(episode)}/turns?run=${enc(run)}${step !== undefined ? `&step=${step}` : ''}`),
  evalTables: (id: string) => getJson<EvalTables>(`api/runs/${enc(id)}/eval`),
  streamUrl: (id: string) => `api/runs/${enc(id)}/stream`,
};
