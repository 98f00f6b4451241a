/**
 * SearchQA (`agentenv-searchqa`): id key `env_idx`; `/create {id: 0}` → bare int;
 * `/reset {env_idx, id: <item>}` → bare string (the first observation, ending with the question);
 * `/step {env_idx, action: <full text>}` → `{observation, reward, done, info}`; `/close` → bool.
 * The server parses `<search>`/`<answer>` tags itself.
 */
import { rawAction } from './parsers.js';
import { bareInt, bareString, booleanAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const INSTRUCTION = [
  'Answer the question by reasoning and searching.',
  'Always think first, inside <think>...</think>.',
  'If you are missing knowledge, write a query inside <search>...</search> and stop there: do not write <information> or <answer> yourself.',
  'Search results come back inside <information>...</information>; continue only once they arrive, and do not skip steps or guess early.',
  'When you know the answer, give it inside <answer>...</answer>, e.g. <answer> Beijing </answer>.',
].join('\n');

/** @example searchqaAdapter.resetBody(51713, settings) // { id: 51713 } */
export const searchqaAdapter: AgentGymAdapter = {
  type: 'searchqa',
  title: 'SearchQA',
  idKey: 'env_idx',
  hasClose: true,
  instruction: INSTRUCTION,
  createBody: () => ({ id: 0 }),
  parseCreate: (body) => bareInt(body, '/create'),
  resetBody: (index) => ({ id: index }),
  parseReset: (body) => ({ observation: bareString(body, '/reset') }),
  parseObservation: (body) => bareString(body, 'GET /observation'),
  prepareAction: rawAction,
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward >= 1,
  invalidObservation: (text) => /^Your previous action is invalid/.test(text),
};
