/**
 * ALFWorld (`agentenv-alfworld`): id key `id`; `/create` → `{id}`; `/reset {id, game,
 * world_type}` → `{id, observation, available_actions, task_type}`; `/step {id, action}` →
 * `{observation, reward, available_actions, done}`. The client shows the observation followed by
 * `AVAILABLE ACTIONS: a,b,c`. The server has no `/close` route: instances are pooled and reused.
 */
import { reactAction } from './parsers.js';
import { booleanAt, intAt, numberAt, objectOf, stringAt, stringsAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const INSTRUCTION = [
  'You are an agent in a household and must complete the task goal by acting in it.',
  'At the start you get a description of the surroundings and your goal; each round you then get the list of actions you may take and choose one.',
  'Think when it helps, then act; prefer acting directly.',
  'Reply either as',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your action>',
  'or, without a thought, as',
  'Action:',
  '<your action>',
  '',
  'Only the listed actions are allowed. If the environment answers "Nothing happens", the action was not valid: try something else.',
].join('\n');

function withActions(observation: string, actions: readonly string[]): string {
  return `${observation}\nAVAILABLE ACTIONS: ${actions.join(',')}`;
}

/** @example alfworldAdapter.resetBody(3, { worldType: 'Text' }) // { game: 3, world_type: 'Text' } */
export const alfworldAdapter: AgentGymAdapter = {
  type: 'alfworld',
  title: 'ALFWorld',
  idKey: 'id',
  hasClose: false,
  instruction: INSTRUCTION,
  createBody: () => undefined,
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'id'),
  resetBody: (index, settings) => ({ game: index, world_type: settings.worldType }),
  parseReset: (body) => {
    const o = objectOf(body, '/reset');
    const actions = stringsAt(o, 'available_actions');
    return { observation: withActions(stringAt(o, 'observation'), actions), availableActions: actions };
  },
  parseObservation: (body) => (typeof body === 'string' ? body : stringAt(objectOf(body, '/observation'), 'observation')),
  prepareAction: (raw) => reactAction(raw, 'Invalid Action. '),
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    const actions = stringsAt(o, 'available_actions');
    return { observation: withActions(stringAt(o, 'observation'), actions), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done'), availableActions: actions };
  },
  success: (reward, done) => done && reward >= 1,
  invalidObservation: (text) => text.startsWith('Nothing happens'),
};
