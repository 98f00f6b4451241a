/**
 * The native TextCraft environment (archiki/ADaPT's TextCraft as AgentGym serves it): craft a goal
 * item from the recipes shown, fetching base items with `get`. Reward 1 and done when the goal item
 * is obtained; every other step is reward 0. Observations after the first are the command's
 * outcome only (`Got 1 lapis lazuli`, `Crafted 1 blue dye`, `Could not find ...`), as in the
 * original; the original writes crafted items as ids (`minecraft:blue_dye`), we write plain names.
 *
 * Settings: `listActions: false` is the free mode (no listed actions; the agent writes commands,
 * as text or as `get` / `craft` / `inventory` tool calls); `recap` (on by default in free mode)
 * repeats the goal, the recipes and the inventory under every outcome, so a context that keeps no
 * history still holds them; `turnRewards` pays a shaped reward for each new item of the goal's
 * recipe tree.
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { MAX_ACTION_CHARS, parseAction } from '../parse-action.js';
import { craftActions } from './actions.js';
import type { RandomActionRequest } from '../random-action.js';
import { readToolAction, stringTool } from '../tool-action.js';
import { type ToolSpec, toolCallText } from '../tools.js';
import { type TextcraftSettings, textcraftSettings } from './catalog.js';
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

/** TextCraft's commands as tools (a call becomes the command text `get …`, `craft …`, `inventory`). */
export const TEXTCRAFT_TOOLS: readonly ToolSpec[] = Object.freeze([
  stringTool('get', 'Fetch a base item (one that has no recipe).', { item: 'Count and item, e.g. "1 lapis lazuli".' }),
  stringTool('craft', 'Craft with the ingredients of a recipe.', { recipe: 'Count, target and ingredients, e.g. "1 blue dye using 1 lapis lazuli".' }),
  { name: 'inventory', description: 'List what you hold.', parameters: { type: 'object', properties: {} } },
]);

/** Shaped reward (`turnRewards`) shared over the items of the goal's recipe tree. */
export const TEXTCRAFT_TREE_BONUS = 0.1;

/**
 * The random baseline's command in free mode, read from the recipes of the first observation: a
 * recipe as shown (craft), a \`get\` of one of its ingredients with a count from 1 to 4, or
 * \`inventory\`.
 * @example randomTextcraftAction({ observation, first, rng, form: 'text' }) // 'Action: get 2 oak log'
 */
export function randomTextcraftAction(request: RandomActionRequest): string {
  const { rng, form } = request;
  const recipes = request.first.text.split('\n').filter((l) => l.startsWith('craft '));
  const roll = rng.next();
  if (roll < 0.1 || recipes.length === 0) return form === 'tools' ? toolCallText({ name: 'inventory', arguments: {} }) : 'Action: inventory';
  const recipe = rng.pick(recipes);
  if (roll < 0.5) return form === 'tools' ? toolCallText({ name: 'craft', arguments: { recipe: recipe.slice('craft '.length) } }) : `Action: ${recipe}`;
  const ingredients = (recipe.split(' using ')[1] ?? '').split(',').map((p) => p.trim().replace(/^\d+\s+/, ''));
  const item = `${1 + rng.int(4)} ${rng.pick(ingredients)}`;
  return form === 'tools' ? toolCallText({ name: 'get', arguments: { item } }) : `Action: get ${item}`;
}
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
  private readonly settings: TextcraftSettings;
  private readonly recap: boolean;
  private setup: EpisodeSetup | null = null;
  /** Items of the goal's recipe tree obtained so far (for the shaped reward), and the tree's items. */
  private treeSeen = new Set<string>();
  private treeItems: ReadonlySet<string> = new Set();
  private readonly inventory = new Map<string, number>();
  private actions: readonly string[] = [];
  private done = false;
  private closed = false;
  private turns = 0;

  constructor(options: EnvironmentOptions = {}, book: RecipeBook = defaultRecipeBook()) {
    this.book = book;
    this.settings = textcraftSettings(options, book); // depth selection only shapes the catalog
    this.recap = this.settings.recap ?? !this.settings.listActions;
    // Every goal's setup is fixed: build them all once per process (~0.1 s), so reset is a lookup.
    const n = book.goals().length;
    for (let i = 0; i < n; i++) episodeSetup(book, i);
  }

  instruction(): string {
    return TEXTCRAFT_INSTRUCTION;
  }

  tools(): readonly ToolSpec[] {
    return TEXTCRAFT_TOOLS;
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
    this.treeSeen = new Set();
    this.treeItems = new Set(this.book.recipeTree(this.setup.goal.item).flatMap((r) => [r.output, ...r.inputs.map((i) => i.name)]));
    this.refreshActions();
    return this.settings.listActions ? { text: this.setup.text, availableActions: this.actions } : { text: this.setup.text };
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
    const call = readToolAction(actionText, TEXTCRAFT_TOOLS);
    if (call.kind === 'invalid') {
      return { observation: this.observation(call.message), reward: 0, done: false, success: false, info: { invalid: true, error: 'bad-tool-call', action: null } };
    }
    if (call.kind === 'call') action = normaliseCall(call.name, call.args);
    else if (actionText.length <= MAX_ACTION_CHARS && NORMAL_FORM.test(actionText)) action = actionText;
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
    let shaped = 0;
    if (this.settings.turnRewards && result.obtained !== null && this.treeItems.has(result.obtained) && !this.treeSeen.has(result.obtained)) {
      this.treeSeen.add(result.obtained);
      shaped = TEXTCRAFT_TREE_BONUS / this.treeItems.size;
    }
    return {
      observation: this.observation(result.message),
      reward: (success ? 1 : 0) + shaped,
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
    const setup = this.setup as EpisodeSetup;
    const shown = this.recap && !this.done ? `${text}\n\n${setup.text}\n${inventoryText(this.inventory)}` : text;
    return this.settings.listActions ? { text: shown, availableActions: this.actions } : { text: shown };
  }

  private assertOpen(method: string): void {
    if (this.closed) throw new EnvironmentError(NAME, `${method} called after close`);
  }
}

/** The normal-form command text of a tool call. */
function normaliseCall(name: string, args: Readonly<Record<string, string>>): string {
  if (name === 'inventory') return 'inventory';
  const parsed = parseAction(`${name} ${name === 'get' ? args.item : args.recipe}`);
  return parsed.ok ? parsed.action : '';
}
