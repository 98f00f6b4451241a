/**
 * WebArena (`agentenv-webarena`, a Quart server): id key `env_idx`; `/create` → `{env_idx}`;
 * `/reset {env_idx, seed: 0, idx}` → `{observation, sites, object}` (observation `"TimeoutError"`
 * when the browser could not load the task), then the first observation is `GET /observation`
 * (the prompt text); `/step {env_idx, action: <full text>}` → `{observation, reward, terminated,
 * truncated, info}`, the reward counted only when terminated; `/close` → `{closed}`.
 */
import { backtickAction } from './parsers.js';
import { bareString, booleanAt, intAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const INSTRUCTION = [
  'You are an autonomous agent that completes tasks in a web browser by issuing actions.',
  '',
  'Each round you see: the objective, the accessibility tree of the current page (a simplified view of it), the current URL, the open tabs, and your previous action.',
  '',
  'Page actions:',
  '```click [id]```: click the element with this id.',
  '```type [id] [content] [0|1]```: type content into the field with this id; Enter is pressed afterwards unless the last value is 0.',
  '```hover [id]```: hover over the element with this id.',
  '```press [key_comb]```: press a key combination (e.g. Ctrl+v).',
  '```scroll [down|up]```: scroll the page.',
  'Tab actions:',
  '```new_tab```: open a new tab.',
  '```tab_focus [tab_index]```: switch to the tab with this index.',
  '```close_tab```: close the current tab.',
  'Navigation actions:',
  '```goto [url]```: open a URL.',
  '```go_back```: go to the previous page.',
  '```go_forward```: go to the next page (after go_back).',
  'Completion:',
  '```stop [answer]```: finish. Put the answer in the brackets if the objective asks for one; write "N/A" if you believe the task cannot be done.',
  '',
  'The homepage http://homepage.com lists the other websites you may visit.',
  '',
  'Rules:',
  '1. Issue only actions that are valid for the current page, one per round.',
  '2. Put every parameter in square brackets.',
  '3. Reason step by step first, then end with "In summary, the next action I will perform is" followed by the action inside triple backticks, e.g. ```type [164] [restaurants near CMU] [1]```.',
  '4. Issue stop once the objective is achieved, and write nothing after it.',
].join('\n');

/** @example webarenaAdapter.resetBody(12, settings) // { seed: 0, idx: 12 } */
export const webarenaAdapter: AgentGymAdapter = {
  type: 'webarena',
  title: 'WebArena',
  idKey: 'env_idx',
  hasClose: true,
  instruction: INSTRUCTION,
  createBody: () => undefined,
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'env_idx'),
  resetBody: (index) => ({ seed: 0, idx: index }),
  parseReset: (body) => {
    const observation = stringAt(objectOf(body, '/reset'), 'observation');
    if (observation === 'TimeoutError') throw new Error('the server could not load the task (observation "TimeoutError"); it may need a restart or a fresh login');
    return { fetchObservation: true };
  },
  parseObservation: (body) => bareString(body, 'GET /observation'),
  prepareAction: backtickAction,
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    const terminated = booleanAt(o, 'terminated');
    const reward = numberAt(o, 'reward');
    return { observation: stringAt(o, 'observation'), reward: terminated ? reward : 0, done: terminated };
  },
  success: (reward, done) => done && reward >= 1,
};
