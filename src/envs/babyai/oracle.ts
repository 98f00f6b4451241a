/**
 * A scripted BabyAI player for GoTo / Pickup / Open goals that uses only what the agent sees: the
 * goal line and the available-action list. If an action reaching a matching object is available it
 * takes the nearest one; otherwise it turns (a full turn at most), then steps forward to see more.
 * Benchmarks report its success rate as the ceiling a learned policy can approach.
 */
import type { Observation } from '../../core/types.js';

/** What a goal asks for: verb and the object description's colour/type (null = any). */
export interface ParsedGoal {
  readonly verb: 'go to' | 'pick up' | 'open';
  readonly color: string | null;
  readonly type: string | null;
}

const COLOR_WORDS = new Set(['red', 'green', 'blue', 'purple', 'yellow', 'grey']);
const TYPE_WORDS = new Set(['ball', 'box', 'key', 'door', 'object']);

/**
 * Reads a single-clause goal ("go to the red ball", "pick up a key", "open the red door").
 * @example parseGoal('go to a blue key') // { verb: 'go to', color: 'blue', type: 'key' }
 */
export function parseGoal(goal: string): ParsedGoal | null {
  const m = /^(go to|pick up|open)\s+(?:the|a)\s+(.+)$/.exec(goal.trim().toLowerCase());
  if (m === null) return null;
  const words = (m[2] ?? '').split(/\s+/);
  const color = words.find((w) => COLOR_WORDS.has(w)) ?? null;
  const typeWord = words.find((w) => TYPE_WORDS.has(w)) ?? null;
  return { verb: m[1] as ParsedGoal['verb'], color, type: typeWord === 'object' ? null : typeWord };
}

/**
 * Goal line of a first observation ("Your goal: ..."), or null.
 * @example extractGoal('Your goal: go to the red ball\n...') // 'go to the red ball'
 */
export function extractGoal(observationText: string): string | null {
  const m = /^Your goal: (.+)$/m.exec(observationText);
  return m === null ? null : (m[1] ?? '').trim();
}

function matches(goal: ParsedGoal, color: string, type: string): boolean {
  return (goal.color === null || goal.color === color) && (goal.type === null || goal.type === type);
}

/**
 * The action that makes progress on `goal`, or null when no matching object is in reach.
 * @example targetAction(['turn left', 'go to red ball 1'], 'go to the red ball') // 'go to red ball 1'
 */
export function targetAction(availableActions: readonly string[], goal: string): string | null {
  const g = parseGoal(goal);
  if (g === null) return null;
  let best: { action: string; n: number } | null = null;
  for (const action of availableActions) {
    let m: RegExpExecArray | null = null;
    if (g.verb === 'go to') m = /^go to (\w+) (?:\w+ )?(\w+) (\d+)$/.exec(action);
    else if (g.verb === 'pick up') m = /^pickup (\w+) (\w+) (\d+)$/.exec(action);
    else m = /^toggle and go through (\w+) (?:closed|locked) (door) (\d+)$/.exec(action);
    if (m === null || !matches(g, m[1] ?? '', m[2] ?? '')) continue;
    const n = Number(m[3]);
    if (best === null || n < best.n) best = { action, n };
  }
  return best?.action ?? null;
}

/**
 * Stateful oracle for one episode: remembers how many turns it spent searching.
 * @example
 * const oracle = new BabyAIOracle();
 * let obs = env.reset(1);
 * const goal = extractGoal(obs.text)!;
 * const action = oracle.act(obs, goal); // 'go to red ball 1' or a search move
 */
export class BabyAIOracle {
  private turnsSearching = 0;

  /** Forgets the search state (call between episodes). */
  reset(): void {
    this.turnsSearching = 0;
  }

  /** Chooses the next action. */
  act(observation: Observation, goal: string): string {
    const actions = observation.availableActions ?? [];
    const target = targetAction(actions, goal);
    if (target !== null) return target;
    if (this.turnsSearching < 3) {
      this.turnsSearching++;
      return 'turn left';
    }
    this.turnsSearching = 0;
    return actions.includes('move forward') ? 'move forward' : 'turn left';
  }
}
