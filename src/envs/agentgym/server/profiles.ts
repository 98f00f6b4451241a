/**
 * What `turnwise env serve` answers, per AgentGym client family, so that AgentGym's own client for
 * that type works unchanged:
 *
 * - `babyai` (agentenv-babyai): `/reset` → `{observation, reward, score, deleted, done}`, `/step`
 *   → `{observation, reward, score, done}`, `GET /observation` → `{observation, reward, score,
 *   done, deleted}`, `/close` → `true|false`.
 * - `textcraft` (agentenv-textcraft): `/create {commands?, goal?}` resets the new instance on task
 *   `id` and answers `{id, observation, done, reward}`; `/reset` → `{id, observation, done,
 *   reward}`; `GET /observation` → bare string; `/close` → `true|false`.
 * - `generic` (AgentGym's documented generic contract): `/create` → `{id}`, `/reset {id,
 *   data_idx=0}` → `{observation, reward, score, done}`, `/step` → `{observation, reward, done}`,
 *   `GET /observation` → `{observation}`, `/close` → `{closed}`.
 */
import type { FieldSpec } from './validate.js';
import type { Session } from './sessions.js';

export type ProfileName = 'babyai' | 'textcraft' | 'generic';

/** The answer shapes of one client family. */
export interface ServeProfile {
  readonly name: ProfileName;
  /** Body of `POST /create` (`null`: no body read). */
  readonly createFields: readonly FieldSpec[] | null;
  readonly resetFields: readonly FieldSpec[];
  /** Whether `/create` also starts task `id` (TextCraft). */
  readonly resetOnCreate: boolean;
  created(session: Session): unknown;
  reset(session: Session): Record<string, unknown>;
  step(session: Session): Record<string, unknown>;
  observation(session: Session): unknown;
  closed(found: boolean): unknown;
}

const ID: FieldSpec = { name: 'id', type: 'int', required: true };

const babyai: ServeProfile = {
  name: 'babyai',
  createFields: null,
  resetFields: [ID, { name: 'data_idx', type: 'int', required: true }],
  resetOnCreate: false,
  created: (s) => ({ id: s.id }),
  reset: (s) => ({ observation: s.observation, reward: s.lastReward, score: s.score, deleted: false, done: s.done }),
  step: (s) => ({ observation: s.observation, reward: s.lastReward, score: s.score, done: s.done }),
  observation: (s) =>
    s.started
      ? { observation: s.observation, reward: s.lastReward, score: s.score, done: s.done, deleted: false }
      : { observation: 'Environment not initialized', reward: 0, score: 0, done: false, deleted: false },
  closed: (found) => found,
};

const textcraft: ServeProfile = {
  name: 'textcraft',
  createFields: [
    { name: 'commands', type: 'str', required: false, fallback: null },
    { name: 'goal', type: 'str', required: false, fallback: null },
  ],
  resetFields: [ID, { name: 'data_idx', type: 'int', required: false, fallback: 0 }],
  resetOnCreate: true,
  created: (s) => ({ id: s.id, observation: s.observation, done: false, reward: 0 }),
  reset: (s) => ({ id: s.id, observation: s.observation, done: false, reward: 0 }),
  step: (s) => ({ observation: s.observation, reward: s.lastReward, done: s.done }),
  observation: (s) => s.observation,
  closed: (found) => found,
};

const generic: ServeProfile = {
  name: 'generic',
  createFields: null,
  resetFields: [ID, { name: 'data_idx', type: 'int', required: false, fallback: 0 }],
  resetOnCreate: false,
  created: (s) => ({ id: s.id }),
  reset: (s) => ({ observation: s.observation, reward: 0, score: 0, done: s.done }),
  step: (s) => ({ observation: s.observation, reward: s.lastReward, done: s.done }),
  observation: (s) => ({ observation: s.observation }),
  closed: (found) => (found ? { closed: true } : { closed: false, error: 'Env not exist' }),
};

/** Profiles by name. */
export const serveProfiles: Readonly<Record<ProfileName, ServeProfile>> = { babyai, textcraft, generic };

/**
 * The profile AgentGym's client for `envName` expects; `generic` for names AgentGym has no client for.
 * @example profileFor('babyai').name // 'babyai'
 */
export function profileFor(envName: string): ServeProfile {
  return envName === 'babyai' || envName === 'textcraft' ? serveProfiles[envName] : generic;
}
