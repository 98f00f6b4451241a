/**
 * TextCraft (`agentenv-textcraft`): id key `id`; `/create {commands, goal}` → `{id, observation,
 * done, reward}` (the server resets the new instance itself); `/reset {id, data_idx}` → `{id,
 * observation, done, reward}`; `/step {id, action}` → `{observation, reward, done}`; `/close`.
 * The client parses the action as for BabyAI, keeping its case.
 */
import { lineAction } from './parsers.js';
import { booleanAt, intAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const INSTRUCTION = [
  'You craft Minecraft items using a few recipes you are given. A recipe reads "craft [target] using [ingredients]".',
  'Each round you receive an observation and reply with your thought and one action.',
  '',
  'Actions:',
  '- get <count> <item>: take a base item from the environment',
  '- inventory: list what you are carrying',
  '- craft <count> <item> using <count> <ingredient>, ...: apply one of the recipes',
  '',
  'Reply in this format:',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your action>',
  '',
  'Keep in mind:',
  '1. Always give counts, e.g. "get 1 lapis lazuli" or "craft 1 golden carrot using 8 gold nugget, 1 carrot".',
  '2. Name only the item; never say where it comes from.',
  '3. Use only the recipes given. A generic ingredient in a recipe (such as planks) may be filled by a specific kind (such as oak planks).',
].join('\n');

/** @example textcraftAdapter.createBody() // { commands: null, goal: null } */
export const textcraftAdapter: AgentGymAdapter = {
  type: 'textcraft',
  title: 'TextCraft',
  idKey: 'id',
  hasClose: true,
  instruction: INSTRUCTION,
  createBody: () => ({ commands: null, goal: null }),
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'id'),
  resetBody: (index) => ({ data_idx: index }),
  parseReset: (body) => ({ observation: stringAt(objectOf(body, '/reset'), 'observation') }),
  parseObservation: (body) => {
    if (typeof body === 'string') return body;
    return stringAt(objectOf(body, '/observation'), 'observation');
  },
  prepareAction: (raw) => lineAction(raw, false),
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward >= 1,
  invalidObservation: (text) => /^(Could not |Wrong item format)/.test(text),
};
