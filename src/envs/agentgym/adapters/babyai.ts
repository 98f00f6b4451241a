/**
 * BabyAI (`agentenv-babyai`): id key `id`; `/create` → `{id}`; `/reset {id, data_idx}` →
 * `{observation, reward, score, deleted, done}`; `/step {id, action}` → `{observation, reward,
 * score, done}`; `/close {id}` → `true|false`. The client parses the action; the agent is credited
 * with `score` (the running sum of rewards). Observations end with `Available actions: [...]`.
 */
import { BABYAI_INSTRUCTION } from '../../babyai/env.js';
import { lineAction } from './parsers.js';
import { booleanAt, intAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const LIST_RE = /Available actions: (\[[^\n]*\])\s*$/;

/** Action strings listed at the end of a BabyAI observation, if any. */
export function babyaiActionsInText(text: string): string[] | undefined {
  const match = LIST_RE.exec(text);
  if (!match) return undefined;
  try {
    const list: unknown = JSON.parse(match[1] as string);
    return Array.isArray(list) && list.every((a) => typeof a === 'string') ? (list as string[]) : undefined;
  } catch {
    return undefined;
  }
}

// Phrases both AgentGym's BabyAI server and ours use when an action cannot run.
const INVALID_RE = /^(The action .*is not recognized|There is a barrier in front of you|You cannot )/;

/** @example agentGymAdapters.babyai.resetBody(1, settings) // { data_idx: 1 } */
export const babyaiAdapter: AgentGymAdapter = {
  type: 'babyai',
  title: 'BabyAI',
  idKey: 'id',
  hasClose: true,
  instruction: BABYAI_INSTRUCTION,
  createBody: () => undefined,
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'id'),
  resetBody: (index) => ({ data_idx: index }),
  parseReset: (body) => ({ observation: stringAt(objectOf(body, '/reset'), 'observation') }),
  parseObservation: (body) => stringAt(objectOf(body, '/observation'), 'observation'),
  prepareAction: (raw) => lineAction(raw, true),
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    numberAt(o, 'reward');
    return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'score'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward > 0,
  actionsInText: babyaiActionsInText,
  invalidObservation: (text) => INVALID_RE.test(text),
};
