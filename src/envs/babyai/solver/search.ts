/**
 * Fewest-turns solutions of a BabyAI episode: breadth-first search over the text-action graph
 * from the true state. A node is a state (agent pose, carried object, object positions, door
 * states, verifier progress; fingerprinted by {@link EpisodeStates.key}), an edge one available
 * text action with the primitive plan the environment would run. Breadth-first order makes the
 * first success found a minimum-turn one. A node budget bounds the work: big levels with many
 * movable objects have more states than a benchmark can afford, and then the answer is `budget`.
 */
import { applyPlan } from '../apply.js';
import type { Instruction } from '../instructions.js';
import { CHECK_ACTIONS, TextRenderer } from '../text.js';
import type { GridWorld } from '../world.js';
import type { EpisodeSnapshot } from './snapshot.js';
import { EpisodeStates } from './snapshot.js';

/** Default number of states expanded before giving up. */
export const DEFAULT_MAX_NODES = 20000;

/** Result of a search. */
export type SearchResult =
  /** `actions` is a shortest list of text actions that completes the instruction (or reaches `until`). */
  | { readonly status: 'solved'; readonly actions: readonly string[]; readonly nodes: number }
  /** The budget ran out first: the optimum is larger than the depth reached. */
  | { readonly status: 'budget'; readonly depth: number; readonly nodes: number }
  /** Every reachable state was expanded: no sequence of text actions wins. */
  | { readonly status: 'unsolvable'; readonly nodes: number };

/** Search limits. */
export interface SearchOptions {
  /** States expanded at most (default {@link DEFAULT_MAX_NODES}). */
  readonly maxNodes?: number;
  /** Deepest turn count explored (default unbounded). */
  readonly maxDepth?: number;
  /**
   * Also stop at the first new state for which this holds (evaluated on the live world, which it
   * must leave as it found it); the instruction's success always stops the search.
   */
  readonly until?: () => boolean;
}

interface Node {
  readonly snap: EpisodeSnapshot;
  readonly parent: number;
  readonly action: string;
  readonly depth: number;
}

/**
 * Shortest text-action solution from the current state of `world` under `instruction`. Both are
 * searched in place and restored before returning.
 * @example
 * const env = new BabyAIEnvironment();
 * env.reset(1);
 * const { world, instruction } = env.trueState()!;
 * searchTurns(world, instruction); // { status: 'solved', actions: ['go to red ball 1'], nodes: 1 }
 */
export function searchTurns(world: GridWorld, instruction: Instruction, options: SearchOptions = {}): SearchResult {
  const maxNodes = options.maxNodes ?? DEFAULT_MAX_NODES;
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const states = new EpisodeStates(world, instruction);
  const text = new TextRenderer();
  const root = states.save();
  const nodes: Node[] = [{ snap: root, parent: -1, action: '', depth: 0 }];
  const seen = new Set<number>([states.key()]);
  const pathTo = (at: number, last: string): string[] => {
    const out = [last];
    for (let k = at; k > 0; k = (nodes[k] as Node).parent) out.push((nodes[k] as Node).action);
    return out.reverse();
  };
  try {
    for (let head = 0; head < nodes.length; head++) {
      const node = nodes[head] as Node;
      if (head >= maxNodes) return { status: 'budget', depth: node.depth, nodes: head };
      if (node.depth >= maxDepth) continue;
      states.restore(node.snap);
      const plans = text.plans(world);
      let dirty = false;
      for (const [label, plan] of plans) {
        if (label === CHECK_ACTIONS || plan.length === 0) continue;
        if (dirty) states.restore(node.snap);
        dirty = true;
        const { status } = applyPlan(world, instruction, plan);
        if (status === 'success') return { status: 'solved', actions: pathTo(head, label), nodes: head + 1 };
        if (status === 'failure' || world.outOfSteps) continue;
        const key = states.key();
        if (seen.has(key)) continue;
        seen.add(key);
        if (options.until?.() === true) return { status: 'solved', actions: pathTo(head, label), nodes: head + 1 };
        nodes.push({ snap: states.save(), parent: head, action: label, depth: node.depth + 1 });
      }
    }
    return { status: 'unsolvable', nodes: nodes.length };
  } finally {
    states.restore(root);
  }
}
