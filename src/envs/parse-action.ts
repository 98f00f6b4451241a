/**
 * Extracts the action from an agent's raw text, as AgentGym's clients do (`agentenv/envs/babyai.py`,
 * `textcraft.py`): the text after an `Action:` marker up to the end of that line (a marker alone on
 * its line takes the next line); more than one `Action:` is an error the environment answers with
 * an observation; characters other than letters, digits, commas and spaces are dropped and
 * whitespace is collapsed. Text without any marker is taken as a bare action. Pure; shared by all
 * environments.
 */

/** Result of parsing: an action, or the observation text to answer with. */
export type ParsedAction =
  | { readonly ok: true; readonly action: string; readonly thought: string | null }
  | { readonly ok: false; readonly reason: 'multiple-actions' | 'empty' | 'missing-action' | 'too-long'; readonly message: string };

/**
 * Longest action accepted, in characters after normalisation. Every listed action of the built-in
 * environments is far shorter; the cap keeps an environment from echoing a huge invalid action back
 * into its observation (a 1 MB reply would otherwise give a 1 MB observation, and a 1 MB context).
 */
export const MAX_ACTION_CHARS = 1000;

/**
 * The answer to an action over {@link MAX_ACTION_CHARS}, or null when it is short enough.
 * @example tooLongAction('x'.repeat(2000)) // { ok: false, reason: 'too-long', message: 'Your action is 2000 characters long; ...' }
 */
export function tooLongAction(action: string): Extract<ParsedAction, { ok: false }> | null {
  if (action.length <= MAX_ACTION_CHARS) return null;
  return { ok: false, reason: 'too-long', message: `Your action is ${action.length} characters long; the limit is ${MAX_ACTION_CHARS}. Reply with "Action:" followed by one short action.` };
}

/** AgentGym's observation for a response with more than one `Action:`. */
export const MULTIPLE_ACTIONS_MESSAGE = "Error: Only one 'Action' is allowed per response. Please adjust your response.";

// `Action:` then optional whitespace (newlines included), then the rest of that line.
const ACTION_RE = /Action:\s*([^\n]*)/g;
const THOUGHT_RE = /Thought:\s*([\s\S]*?)(?=Action:|$)/;

/**
 * Drops characters outside [A-Za-z0-9, ] and collapses whitespace, as AgentGym does. Lower-cases
 * too (AgentGym's BabyAI server lower-cases before looking the action up).
 * @example normaliseAction('  Go to  the red-ball!\n') // 'go to the redball'
 */
export function normaliseAction(text: string, lowerCase = true): string {
  const kept = text.replace(/\s+/g, ' ').replace(/[^A-Za-z0-9, ]+/g, '');
  const collapsed = kept.split(' ').filter((w) => w.length > 0).join(' ');
  return lowerCase ? collapsed.toLowerCase() : collapsed;
}

/**
 * Parses an agent response in `Thought: ... Action: ...` form or a bare action.
 * @example
 * parseAction('Thought:\nThe ball is ahead.\n\nAction:\ngo to red ball 1')
 * // { ok: true, action: 'go to red ball 1', thought: 'The ball is ahead.' }
 * parseAction('turn left') // { ok: true, action: 'turn left', thought: null }
 */
export function parseAction(text: string, options: { lowerCase?: boolean } = {}): ParsedAction {
  const lowerCase = options.lowerCase ?? true;
  const cleaned = text.replace(/<\/s>\s*$/, '');
  const matches = [...cleaned.matchAll(ACTION_RE)];
  if (matches.length > 1) return { ok: false, reason: 'multiple-actions', message: MULTIPLE_ACTIONS_MESSAGE };
  const thoughtMatch = THOUGHT_RE.exec(cleaned);
  const thought = thoughtMatch ? (thoughtMatch[1] ?? '').trim() || null : null;
  let raw: string;
  if (matches.length === 1) raw = matches[0]?.[1] ?? '';
  else if (thoughtMatch) {
    return { ok: false, reason: 'missing-action', message: 'Your response has a Thought but no Action. End it with "Action:" followed by one action.' };
  } else raw = cleaned;
  const action = normaliseAction(raw, lowerCase);
  const tooLong = tooLongAction(action);
  if (tooLong !== null) return tooLong;
  if (action.length === 0) return { ok: false, reason: 'empty', message: 'No action found in your response. Reply with "Action:" followed by one action.' };
  return { ok: true, action, thought };
}
