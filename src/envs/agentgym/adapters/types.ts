/**
 * What differs between AgentGym's environment servers, as data plus small pure functions: the id
 * key, the request bodies, the answer shapes, where the first observation comes from, how the
 * agent's raw text becomes the action sent, and the instruction shown to the agent. The HTTP and
 * session logic in `../environment.ts` is the same for all of them.
 */

/** The environment types AgentGym serves (and `generic`: AgentGym's documented generic contract). */
export const AGENTGYM_TYPES = [
  'babyai',
  'textcraft',
  'sciworld',
  'webarena',
  'searchqa',
  'webshop',
  'alfworld',
  'maze',
  'wordle',
  'sqlgym',
  'weather',
  'movie',
  'todo',
  'sheet',
  'academia',
  'generic',
] as const;

export type AgentGymType = (typeof AGENTGYM_TYPES)[number];

/** The action to send, or an observation to answer with locally (the client refused the text). */
export type PreparedAction =
  | { readonly send: true; readonly action: string }
  | { readonly send: false; readonly observation: string; readonly reason: string };

/** A step answer reduced to what every server provides. */
export interface StepFields {
  readonly observation: string;
  /** The reward the agent is credited with (AgentGym's client semantics: BabyAI/SciWorld use `score`). */
  readonly reward: number;
  readonly done: boolean;
  /** Actions the server listed with this answer (ALFWorld), if any. */
  readonly availableActions?: readonly string[];
}

/** A reset answer: the first observation, or a request to fetch it with `GET /observation`. */
export type ResetFields =
  | { readonly observation: string; readonly availableActions?: readonly string[] }
  | { readonly fetchObservation: true };

/** Settings an adapter may read (already validated). */
export interface AdapterSettings {
  /** ALFWorld `world_type`. */
  readonly worldType: string;
}

/** Adapter-local state kept between calls (e.g. Wordle's vocabulary fetched after `/create`). */
export interface AdapterState {
  vocabulary?: readonly string[];
}

/** One server type. Parsing functions throw `Error` with a plain message on a shape they do not accept. */
export interface AgentGymAdapter {
  readonly type: AgentGymType;
  /** Human name for messages (`SciWorld`). */
  readonly title: string;
  /** Key that carries the instance id in bodies and query strings. */
  readonly idKey: 'id' | 'env_idx';
  /** Whether the server has `POST /close`. Without it, instances are pooled and reused (see `../leases.ts`). */
  readonly hasClose: boolean;
  /** The instruction shown before the first observation (AgentGym's conversation_start[0], in our words). */
  readonly instruction: string;
  /** Body of `POST /create` (`undefined`: none). */
  createBody(): unknown;
  /** Instance id from the `/create` answer. */
  parseCreate(body: unknown): number;
  /** Optional GETs right after `/create` (Wordle fetches its vocabulary). */
  afterCreate?(get: (path: string) => Promise<unknown>, state: AdapterState): Promise<void>;
  /** Body of `POST /reset` for task `index` (without the id key). */
  resetBody(index: number, settings: AdapterSettings): Record<string, unknown>;
  parseReset(body: unknown, state: AdapterState): ResetFields;
  /** Turns the `GET /observation` answer into the first observation (when reset asked for it). */
  parseObservation(body: unknown): string;
  /** Client-side parsing of the agent's raw text, as AgentGym's client for this type does. */
  prepareAction(raw: string): PreparedAction;
  parseStep(body: unknown): StepFields;
  /** Whether a final answer means the task was solved. */
  success(reward: number, done: boolean): boolean;
  /** Actions listed in an observation text (BabyAI appends them), if the type does that. */
  actionsInText?(text: string): readonly string[] | undefined;
  /** Whether a server observation says the action was not executable. */
  invalidObservation?(text: string): boolean;
}
