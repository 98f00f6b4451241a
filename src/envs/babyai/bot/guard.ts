/**
 * Loop guard for the BabyAI bot. The bot's heuristic is a pure function of the state, so the
 * first time its chosen action would lead back to a state already visited this episode it would
 * cycle for ever; and in some layouts (an agent boxed in by objects, a cell that must be emptied
 * in a sliding-puzzle order) it finds no action at all. In both cases the guard hands over to a
 * breadth-first search over text actions from the true state (`solver/search.ts`): first for the
 * whole instruction with a small budget, else for the nearest new state from which the heuristic
 * moves on to another new state; it follows that plan, then lets the heuristic act again. Every
 * state visited stays visited, so the episode can never cycle.
 *
 * When those small searches are used up or find nothing, the guard escalates: a search for the
 * whole instruction from the current state with a budget that grows each time
 * ({@link ESCALATION_NODES}), and follows the first solution to the end. A safety net (no test
 * seed of any level needs it at present); slow (seconds) where it runs.
 */
import { applyPlan } from '../apply.js';
import type { Instruction } from '../instructions.js';
import { searchTurns } from '../solver/search.js';
import { EpisodeStates } from '../solver/snapshot.js';
import type { TextState } from '../text.js';
import { TextRenderer } from '../text.js';
import type { GridWorld } from '../world.js';

/** States a search for the whole instruction may expand before the guard settles for a detour. */
export const SOLVE_NODES = 3000;
/** States a search for a detour may expand. */
export const DETOUR_NODES = 3000;
/** Fallback searches per episode at most (each costs up to ~1 s on the biggest levels). */
export const MAX_SEARCHES = 8;
/**
 * Budgets of the escalating whole-instruction searches, tried in turn once the small searches are
 * spent (each ~60 k states per second on the biggest levels, ~300 bytes per state held).
 */
export const ESCALATION_NODES: readonly number[] = [20_000, 100_000, 400_000];

/** What the guard sees each turn (the bot's view). */
export interface GuardView {
  readonly world: GridWorld;
  readonly instruction: Instruction;
  readonly text: TextState;
}

/**
 * Per-episode memory of visited states and the fallback plan being followed.
 * @example
 * const guard = new LoopGuard((view) => heuristic(view));
 * const action = guard.choose(view); // the heuristic's action, or a search plan's next step
 */
export class LoopGuard {
  private world: GridWorld | null = null;
  private states: EpisodeStates | null = null;
  private readonly visited = new Set<number>();
  private readonly text = new TextRenderer();
  private plan: string[] = [];
  /** Fallback searches left this episode. */
  private searchesLeft = MAX_SEARCHES;
  /** Next entry of {@link ESCALATION_NODES} to try this episode. */
  private escalation = 0;
  /** Times a fallback search ran (all episodes): for tests and benchmarks. */
  searches = 0;

  constructor(private readonly suggest: (view: GuardView) => string | null) {}

  /** The action to take now, or null when neither the heuristic nor a search finds one. */
  choose(view: GuardView): string | null {
    const { world, instruction, text } = view;
    // A new episode (the environment builds a new world on reset): forget the last one.
    if (world !== this.world || this.states === null) {
      this.world = world;
      this.states = new EpisodeStates(world, instruction);
      this.visited.clear();
      this.plan = [];
      this.searchesLeft = MAX_SEARCHES;
      this.escalation = 0;
    }
    this.visited.add(this.states.key());
    const planned = this.plan.shift();
    if (planned !== undefined && text.plans.has(planned)) return planned;
    this.plan = [];
    const suggested = this.suggest(view);
    if (suggested !== null && this.movesOn(view, suggested)) return suggested;
    if (this.searchesLeft <= 0) return this.escalate(view) ?? suggested;
    this.searchesLeft--;
    this.searches++;
    let found = searchTurns(world, instruction, { maxNodes: SOLVE_NODES });
    if (found.status !== 'solved') {
      const until = (): boolean => {
        const here: GuardView = { world, instruction, text: this.text.observe(world) };
        const next = this.suggest(here);
        return next !== null && this.movesOn(here, next);
      };
      found = searchTurns(world, instruction, { maxNodes: DETOUR_NODES, until });
    }
    // Nothing within the small budgets: stop those searches this episode (they would fail again,
    // turn after turn) and escalate instead.
    if (found.status !== 'solved') {
      this.searchesLeft = 0;
      return this.escalate(view) ?? suggested;
    }
    this.plan = found.actions.slice(1);
    return found.actions[0] ?? null;
  }

  /**
   * A whole-instruction search from the current state with the next, larger budget; its first
   * action (the rest is followed to the end), or null when every budget is spent or nothing wins.
   */
  private escalate(view: GuardView): string | null {
    while (this.escalation < ESCALATION_NODES.length) {
      const maxNodes = ESCALATION_NODES[this.escalation++] as number;
      this.searches++;
      const found = searchTurns(view.world, view.instruction, { maxNodes });
      if (found.status === 'unsolvable') break;
      if (found.status === 'solved') {
        this.plan = found.actions.slice(1);
        return found.actions[0] ?? null;
      }
    }
    this.escalation = ESCALATION_NODES.length;
    return null;
  }

  /** Whether `action` wins or leads to a state not visited yet (looked at on the true state, then undone). */
  private movesOn(view: GuardView, action: string): boolean {
    const steps = view.text.plans.get(action);
    const states = this.states;
    if (steps === undefined || states === null) return false;
    const here = states.save();
    const { status } = applyPlan(view.world, view.instruction, steps);
    const next = states.key();
    states.restore(here);
    return status === 'success' || (status === 'continue' && !this.visited.has(next) && next !== states.key());
  }
}
