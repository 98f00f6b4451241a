/**
 * Client-side action extraction, one function per rule AgentGym's clients use
 * (`agentenv/agentenv/envs/*.py`, `controller/utils.py`). Pure.
 */
import { parseAction } from '../../parse-action.js';
import type { PreparedAction } from './types.js';

/** Drops a trailing end-of-sequence marker, as AgentGym's clients do. */
export function stripEos(text: string): string {
  return text.replace(/<\/s>\s*$/, '');
}

/**
 * BabyAI / TextCraft: one `Action:` line, characters outside [A-Za-z0-9, ] dropped (shared with
 * the native environments: `src/envs/parse-action.ts`).
 * @example lineAction('Thought: hi\nAction: turn left', true) // { send: true, action: 'turn left' }
 */
export function lineAction(raw: string, lowerCase: boolean): PreparedAction {
  const parsed = parseAction(raw, { lowerCase });
  return parsed.ok ? { send: true, action: parsed.action } : { send: false, observation: parsed.message, reason: parsed.reason };
}

/**
 * ReAct (SciWorld, WebShop, ALFWorld): the text after the last `Action:`; without a marker the
 * whole text is taken as a bare action.
 * @example reactAction('Thought:\nx\n\nAction:\nlook around') // { send: true, action: 'look around' }
 */
export function reactAction(raw: string, invalidPrefix: string): PreparedAction {
  const text = stripEos(raw);
  const cut = text.lastIndexOf('Action:');
  const action = (cut >= 0 ? text.slice(cut + 'Action:'.length) : text).trim();
  if (action.length === 0) return { send: false, observation: `${invalidPrefix}Your response has no action after "Action:".`, reason: 'empty' };
  return { send: true, action };
}

/**
 * LMRL-Gym Maze / Wordle: the text between the first `Action:` and the next one (or the end).
 * @example firstAction('Thought: t\nAction: move up') // { send: true, action: 'move up' }
 */
export function firstAction(raw: string): PreparedAction {
  const parts = stripEos(raw).split('Action:');
  const action = (parts.length > 1 ? (parts[1] as string) : (parts[0] as string)).trim();
  if (action.length === 0) return { send: false, observation: 'Your response has no action. End it with "Action:" and your move.', reason: 'empty' };
  return { send: true, action };
}

/**
 * WebArena: the full text is sent, but only if it has an action inside triple backticks.
 * @example backtickAction('... I will ```click [3]```') // { send: true, action: <the full text> }
 */
export function backtickAction(raw: string): PreparedAction {
  if (!/```[\s\S]*?```/.test(raw)) {
    return { send: false, observation: 'No action found: put your action inside triple backticks (```), e.g. ```click [12]```.', reason: 'missing-backticks' };
  }
  return { send: true, action: raw };
}

/**
 * SQLGym: the statement inside the last ```sql fence (or the text after it).
 * @example sqlAction('Action: ```sql\nSELECT 1;\n```') // { send: true, action: 'SELECT 1;' }
 */
export function sqlAction(raw: string): PreparedAction {
  const afterFence = raw.split('```sql').pop() ?? '';
  const action = (afterFence.split('```')[0] ?? '').trim();
  if (action.length === 0) return { send: false, observation: 'No SQL found: put one statement inside a ```sql fence.', reason: 'empty' };
  return { send: true, action };
}

/** Raw text as it is (servers that parse themselves: SearchQA, tool envs, generic). */
export function rawAction(raw: string): PreparedAction {
  return { send: true, action: raw };
}
