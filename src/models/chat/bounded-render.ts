/**
 * Chat templates come from downloaded model folders, and Jinja is a programming language: a
 * template can loop a billion times or grow a string without end. A render therefore runs under a
 * budget, checked as @huggingface/jinja's interpreter evaluates each node:
 *
 * - `maxSteps` steps: one per node evaluated, plus one per item of every list produced (a `for`
 *   over a list costs the interpreter a scope per item before its body runs). Deterministic: the
 *   same template and messages always stop at the same place, on any machine;
 * - `maxItems` items in any list (`range()` refuses to build a longer one);
 * - `maxOutputChars` characters in any single string, the rendered text included;
 * - `maxProducedChars` characters summed over every string produced (bounds what a loop accumulates);
 * - `deadlineMs` of wall time, checked every 64 steps: a backstop, far above what real templates take.
 *
 * Real templates stay far below: Qwen2.5's on an 81-message conversation renders within a fiftieth
 * of the step budget (test/models/chat/bounded-render.test.ts). One amplifying call still allocates before its result is counted
 * (`indent` with a huge width, `replace` of a long string): V8 caps a single string at about
 * 512 MiB, and the budget refuses the result right after.
 */
import type { Environment } from '@huggingface/jinja';
import type { JinjaValue } from './jinja-values.js';
import { PythonInterpreter } from './python-interpreter.js';

/** Limits of one render. */
export interface RenderBudget {
  readonly maxSteps: number;
  readonly maxItems: number;
  readonly maxOutputChars: number;
  readonly maxProducedChars: number;
  readonly deadlineMs: number;
}

/** The default budget: about 1,000 times what a long conversation with a real template needs. */
export const DEFAULT_RENDER_BUDGET: RenderBudget = {
  maxSteps: 1_000_000,
  maxItems: 100_000,
  maxOutputChars: 4 * 2 ** 20,
  maxProducedChars: 64 * 2 ** 20,
  deadlineMs: 2000,
};

/**
 * A render went over its budget; `detail` says which limit and by how much.
 * @example catch (e) { if (e instanceof RenderBudgetExceeded) console.error(e.detail); }
 */
export class RenderBudgetExceeded extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'RenderBudgetExceeded';
  }
}

const CHECK_EVERY = 64;

/**
 * turnwise's interpreter (Python semantics, `python-interpreter.ts`) with the budget checked at every node.
 * @example new BoundedInterpreter(env, DEFAULT_RENDER_BUDGET).run(parsed).value
 */
export class BoundedInterpreter extends PythonInterpreter {
  private steps = 0;
  private produced = 0;
  private readonly deadline: number;

  constructor(
    env: Environment,
    private readonly budget: RenderBudget,
    private readonly now: () => number = () => performance.now(),
  ) {
    super(env);
    this.deadline = now() + budget.deadlineMs;
  }

  override evaluate(statement: unknown, environment: unknown): JinjaValue {
    const b = this.budget;
    if (++this.steps > b.maxSteps) throw new RenderBudgetExceeded(`more than ${b.maxSteps.toLocaleString('en-US')} evaluation steps`);
    if (this.steps % CHECK_EVERY === 0 && this.now() > this.deadline) throw new RenderBudgetExceeded(`more than ${b.deadlineMs} ms (after ${this.steps.toLocaleString('en-US')} steps)`);
    const value = super.evaluate(statement, environment);
    const inner = value.value;
    if (typeof inner === 'string') {
      if (inner.length > b.maxOutputChars) throw new RenderBudgetExceeded(`a string of ${inner.length.toLocaleString('en-US')} characters (limit ${b.maxOutputChars.toLocaleString('en-US')})`);
      this.produced += inner.length;
      if (this.produced > b.maxProducedChars) throw new RenderBudgetExceeded(`more than ${b.maxProducedChars.toLocaleString('en-US')} characters produced in all`);
    } else if (Array.isArray(inner)) {
      if (inner.length > b.maxItems) throw new RenderBudgetExceeded(`a list of ${inner.length.toLocaleString('en-US')} items (limit ${b.maxItems.toLocaleString('en-US')})`);
      this.steps += inner.length;
    }
    return value;
  }
}

/**
 * Python's `range(start, stop, step)` for templates, refusing to build more than `maxItems` items.
 * @example boundedRange(10)(3) // [0, 1, 2]
 */
export function boundedRange(maxItems: number): (start: number, stop?: number, step?: number) => number[] {
  return (start, stop, step = 1) => {
    const [from, to] = stop === undefined ? [0, start] : [start, stop];
    if (step === 0) throw new Error('range() step must not be zero');
    const count = Math.max(0, Math.ceil((to - from) / step));
    if (!(count <= maxItems)) throw new RenderBudgetExceeded(`range() of ${Number.isFinite(count) ? count.toLocaleString('en-US') : String(count)} items (limit ${maxItems.toLocaleString('en-US')})`);
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(from + i * step);
    return out;
  };
}
