/**
 * SciWorld (`agentenv-sciworld`): id key `id`; `/create` → `{id}`; `/reset {id, data_idx}` →
 * `{task_name, var_num, task_description, observation, ...}` and the first observation is
 * `task_description + "\n" + observation`; `/step {id, action}` → `{observation, reward, score,
 * done}`, the agent credited with `score` (0–100; 100 = solved); `/close`. ReAct parsing client-side.
 */
import { reactAction } from './parsers.js';
import { booleanAt, intAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const ACTIONS: readonly (readonly [string, string])[] = [
  ['open OBJ / close OBJ', 'open or close a container'],
  ['activate OBJ / deactivate OBJ', 'switch a device on or off'],
  ['connect OBJ to OBJ', 'join electrical components'],
  ['disconnect OBJ', 'separate electrical components'],
  ['use OBJ [on OBJ]', 'use a device or item'],
  ['look around', 'describe the room you are in'],
  ['look at OBJ', 'describe an object in detail'],
  ['look in OBJ', "describe a container's contents"],
  ['read OBJ', 'read a note or book'],
  ['move OBJ to OBJ', 'put an object into a container'],
  ['pick up OBJ', 'put an object in your inventory'],
  ['put down OBJ', 'drop an item from your inventory'],
  ['pour OBJ into OBJ', 'pour a liquid into a container'],
  ['dunk OBJ into OBJ', 'dunk a container into a liquid'],
  ['mix OBJ', 'chemically mix what a container holds'],
  ['go to LOC', 'move to another location'],
  ['eat OBJ', 'eat some food'],
  ['flush OBJ', 'flush a toilet'],
  ['focus on OBJ', 'declare the object the task is about'],
  ['wait', 'do nothing for 10 ticks'],
  ['wait1', 'do nothing for 1 tick'],
  ['examine OBJ', 'describe what is on or in a receptacle'],
  ['task', 'repeat the task description'],
  ['inventory', 'list what you carry'],
];

const INSTRUCTION = [
  'You are an agent in a science-world simulation. Each round you receive an observation and reply with one action that moves you toward finishing the task.',
  '',
  'Actions (OBJ is an object, LOC a location):',
  ...ACTIONS.map(([action, what]) => `- ${action}: ${what}`),
  '',
  'Reply in this format:',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your action>',
].join('\n');

/** @example sciworldAdapter.success(100, true) // true */
export const sciworldAdapter: AgentGymAdapter = {
  type: 'sciworld',
  title: 'SciWorld',
  idKey: 'id',
  hasClose: true,
  instruction: INSTRUCTION,
  createBody: () => undefined,
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'id'),
  resetBody: (index) => ({ data_idx: index }),
  parseReset: (body) => {
    const o = objectOf(body, '/reset');
    return { observation: `${stringAt(o, 'task_description')}\n${stringAt(o, 'observation')}` };
  },
  parseObservation: (body) => (typeof body === 'string' ? body : stringAt(objectOf(body, '/observation'), 'observation')),
  prepareAction: (raw) => reactAction(raw, 'Invalid Action. '),
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'score'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward >= 100,
  invalidObservation: (text) => /^No known action matches that input\./.test(text),
};
