/**
 * WebShop (`agentenv-webshop`): id key `env_idx`; `/create` → bare int; `/reset {env_idx,
 * session_id}` → `[observation, null]`, after which AgentGym's client reads `GET /observation`;
 * `/step {env_idx, action}` → `{state, reward, done, info}`. There is no `/close` route (AgentGym
 * issue #62): instances are pooled and reused instead (see `../leases.ts`).
 */
import { reactAction } from './parsers.js';
import { bareInt, bareString, booleanAt, numberAt, objectOf, observationPair, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const INSTRUCTION = [
  'You are shopping on a web store and must follow the instruction you are given.',
  'Each round you receive an observation with the available actions and reply with one action.',
  'Actions:',
  '- search[keywords]: when a search bar is available; choose the keywords carefully.',
  '- click[value]: click a button; the value must be one of the listed clickables.',
  'An action that is not valid does nothing.',
  '',
  'Reply in this format:',
  'Thought:',
  'I think ...',
  '',
  'Action:',
  'click[something]',
].join('\n');

/** @example webshopAdapter.hasClose // false */
export const webshopAdapter: AgentGymAdapter = {
  type: 'webshop',
  title: 'WebShop',
  idKey: 'env_idx',
  hasClose: false,
  instruction: INSTRUCTION,
  createBody: () => undefined,
  parseCreate: (body) => bareInt(body, '/create'),
  resetBody: (index) => ({ session_id: index }),
  parseReset: (body) => {
    observationPair(body, '/reset');
    return { fetchObservation: true };
  },
  parseObservation: (body) => bareString(body, 'GET /observation'),
  prepareAction: (raw) => reactAction(raw, 'Invalid Action. '),
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'state'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward >= 1,
};
