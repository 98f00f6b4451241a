/**
 * AgentGym's generic contract (`docs/tutorials/en/05-2nd-Development.md` §1.5): id key `id`;
 * `/create` → `{id}`; `/reset {id, data_idx}` → `{observation, reward, score, done}`;
 * `/step {id, action}` → `{observation, reward, done}`; `GET /observation?id=` →
 * `{observation}`; `/close {id}` → `{closed}`. The raw text is sent: the server parses it (as
 * turnwise's native environments do when served by `turnwise env serve`).
 */
import { rawAction } from './parsers.js';
import { booleanAt, intAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

/** @example genericAdapter.resetBody(3, settings) // { data_idx: 3 } */
export const genericAdapter: AgentGymAdapter = {
  type: 'generic',
  title: 'generic',
  idKey: 'id',
  hasClose: true,
  instruction: 'Each round you receive an observation. Reply with your thought and one action, in this format:\nThought:\n<your thought>\n\nAction:\n<your action>',
  createBody: () => undefined,
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'id'),
  resetBody: (index) => ({ data_idx: index }),
  parseReset: (body) => ({ observation: stringAt(objectOf(body, '/reset'), 'observation') }),
  parseObservation: (body) => (typeof body === 'string' ? body : stringAt(objectOf(body, '/observation'), 'observation')),
  prepareAction: rawAction,
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward > 0,
};
