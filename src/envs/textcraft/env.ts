/**
 * The native TextCraft environment (archiki/ADaPT's TextCraft as AgentGym serves it): craft a goal
 * item from the recipes shown, fetching base items with `get`. Reward 1 and done when the goal item
 * is obtained; every other step is reward 0. Observations after the first are the command's
 * outcome only (`Got 1 lapis lazuli`, `Crafted 1 blue dye`, `Could not find ...`), as in the
 * original; the original writes crafted items as ids (`minecraft:blue_dye`), we write plain names.
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { MAX_ACTION_CHARS, parseAction } from '../parse-action.js';
import { craftActions } from './actions.js';
import { textcraftSettings } from './catalog.js';
import { applyCommand, inventoryText, parseCommand } from './commands.js';
import type { EpisodeSetup } from './episode.js';
import { episodeSetup } from './episode.js';
import type { RecipeBook } from './recipe-book.js';
import { defaultRecipeBook } from './recipe-book.js';

/**
 * The instruction shown before the first observation (AgentGym's conversation_start[0], in our
 * words): the three commands, the count rule, generic ingredients, the reply format.
 */
export const TEXTCRAFT_INSTRUCTION = [
  'You craft items in a simplified Minecraft. You are given a goal item and some crafting recipes, written as "craft [count] [target] using [count] [ingredient], ...".',
  'Commands:',
  '- get [count] [item]: fetch a base item (one that has no recipe), e.g. get 1 lapis lazuli',
  '- craft [count] [target] using [count] [ingredient], ...: craft with the ingredients of a recipe, e.g. craft 1 golden carrot using 8 gold nugget, 1 carrot',
  '- inventory: list what you hold',
  'Always give counts. Use only the recipes given. A generic ingredient such as "planks" means any kind of it: name the kind you hold, e.g. "4 oak planks".',
  '',
  'Reply in this format:',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your action>',
].join('\n');

const NAME = 'textcraft';
// What `normaliseAction` returns unchanged: lower-case words of [a-z0-9,] separated by single spaces.
const NORMAL_FORM = /^[a-z0-9,]+(?: [a-z0-9,]+)*$/;

/**
 * One TextCraft episode at a time.
 * @example
 * const env = new TextCraftEnvironment();
 * env.reset(0); // goal: the first depth-1 item
 * env.step('Thought: I need the log.\nAction: get 1 acacia log');
 */
export class TextCraftEnvironment implements Environment {
  readonly name = NAME;
  private readonly book: RecipeBook;
  private setup: EpisodeSetup | null = null;
  private readonly inventory = new Map<string, number>();
  private actions: readonly string[] = [];
  private done = false;
  private closed = false;
  private turns = 0;

  constructor(options: EnvironmentOptions = {}, book: RecipeBook = defaultRecipeBook()) {
    this.book = book;
    textcraftSettings(options, book); // validates settings early; depth selection only shapes the catalog
    // Every goal's setup is fixed: build them all once per process (~0.1 s), so reset is a lookup.
    const n = book.goals().length;
    for (let i = 0; i < n; i++) episodeSetup(book, i);
  }

  instruction(): string {
    return TEXTCRAFT_INSTRUCTION;
  }

  /** Starts task `index`: goal `goals()[index % n]` with that goal's recipes and distractors. */
  reset(index: number): Observation {
    this.assertOpen('reset');
    if (!Number.isInteger(index) || index < 0) throw new EnvironmentError(NAME, `reset: task index must be a non-negative integer, got ${index}`);
    const n = this.book.goals().length;
    this.setup = episodeSetup(this.book, index % n);
    this.inventory.clear();
    this.done = false;
    this.turns = 0;
    this.refreshActions();
    return { text: this.setup.text, availableActions: this.actions };
  }

  /** Applies the agent's raw text (Thought/Action format or a bare action). */
  step(actionText: string): StepResult {
    this.assertOpen('step');
    const setup = this.setup;
    if (setup === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (typeof actionText !== 'string') throw new EnvironmentError(NAME, `step: actionText must be a string, got ${typeof actionText}`);
    if (this.done) {
      return { observation: this.observation('The episode is over. Reset the environment to start a new one.'), reward: 0, done: true, success: false, info: { invalid: true, error: 'episode-over' } };
    }
    this.turns++;
    let action: string;
    // Fast path: a bare action already in normal form (what constrained decoding emits) needs no parsing.
    if (actionText.length <= MAX_ACTION_CHARS && NORMAL_FORM.test(actionText)) action = actionText;
    else {
      const parsed = parseAction(actionText);
      if (!parsed.ok) {
        return { observation: this.observation(parsed.message), reward: 0, done: false, success: false, info: { invalid: true, error: parsed.reason, action: null } };
      }
      action = parsed.action;
    }
    const result = applyCommand(this.book, this.inventory, parseCommand(action));
    if (result.changed) this.refreshActions();
    const success = result.obtained === setup.goal.item;
    if (success) this.done = true;
    return {
      observation: this.observation(result.message),
      reward: success ? 1 : 0,
      done: success,
      success,
      info: { invalid: result.error !== null, error: result.error, action, goal: setup.goal.item, depth: setup.goal.depth },
    };
  }

  close(): void {
    this.closed = true;
    this.setup = null;
    this.inventory.clear();
  }

  /** Goal, inventory and the recipes shown (gold and distractors), for viewers and debugging. */
  render(): string {
    const setup = this.setup;
    if (setup === null) return '(no episode)';
    const gold = new Set(this.book.recipeTree(setup.goal.item));
    const lines = [
      `TextCraft textcraft_${setup.position}: goal ${setup.goal.item} (depth ${setup.goal.depth}), turn ${this.turns}${this.done ? ', done' : ''}`,
      inventoryText(this.inventory),
      'Recipes shown (* = in the goal tree):',
      ...setup.shown.map((r) => `${gold.has(r) ? '*' : ' '} ${r.text}`),
    ];
    return lines.join('\n');
  }

  /** The goal item of the current episode. */
  goal(): string {
    if (this.setup === null) throw new EnvironmentError(NAME, 'goal() called before reset');
    return this.setup.goal.item;
  }

  /** What the agent holds (a copy). */
  holdings(): Map<string, number> {
    return new Map(this.inventory);
  }

  private refreshActions(): void {
    const setup = this.setup as EpisodeSetup;
    const crafts = craftActions(this.book, setup.shown, this.inventory);
    if (crafts.length === 0) this.actions = setup.idleActions;
    else {
      for (const a of setup.idleActions) crafts.push(a);
      this.actions = crafts;
    }
  }

  private observation(text: string): Observation {
    return { text, availableActions: this.actions };
  }

  private assertOpen(method: string): void {
    if (this.closed) throw new EnvironmentError(NAME, `${method} called after close`);
  }
}
