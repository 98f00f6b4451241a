/**
 * SQLGym (`agentenv-sqlgym`): id key `env_idx`; `/create` → bare int; `/reset {env_idx,
 * item_id}` → `[observation, null]`, then the first observation from `GET /observation` (bare
 * string); `/step {env_idx, action: <one SQL statement>}` → `{state, reward, done, info}`. No
 * `/close`: instances are pooled and reused. The client cuts the SQL out of a ```sql fence.
 */
import { sqlAction } from './parsers.js';
import { bareInt, bareString, booleanAt, numberAt, objectOf, observationPair, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const INSTRUCTION = [
  'You answer questions about a SQLite database by querying it with SQL. You get a description of the database and a question.',
  'Explain the problem and your plan in a thought, then give one SQL statement that answers the question.',
  'Reply like this:',
  'Thought: <your thought>',
  '',
  'Action: ```sql',
  'SELECT * FROM table WHERE condition;',
  '```',
  'Put the SQL, on one line and with no comments, in a ```sql fence. Only one statement runs per reply.',
].join('\n');

/** @example sqlgymAdapter.resetBody(5, settings) // { item_id: 5 } */
export const sqlgymAdapter: AgentGymAdapter = {
  type: 'sqlgym',
  title: 'SQLGym',
  idKey: 'env_idx',
  hasClose: false,
  instruction: INSTRUCTION,
  createBody: () => undefined,
  parseCreate: (body) => bareInt(body, '/create'),
  resetBody: (index) => ({ item_id: index }),
  parseReset: (body) => {
    observationPair(body, '/reset');
    return { fetchObservation: true };
  },
  parseObservation: (body) => bareString(body, 'GET /observation'),
  prepareAction: sqlAction,
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'state'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward >= 1,
};
