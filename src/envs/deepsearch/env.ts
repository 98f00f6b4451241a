/**
 * The deep-search environment: AgentGym SearchQA's protocol over a local corpus. The agent searches
 * with `<search>query</search>` (the top-k documents come back in an `<information>` block) and
 * answers with `<answer>text</answer>` (or calls the `search` / `answer` tools). A correct answer
 * (exact match after normalisation, or the chosen `metric`) ends the episode with reward 1; a
 * wrong one is told so and the episode goes on, as in AgentGym (`wrongAnswer: retry`), or ends it
 * as in Search-R1 (`wrongAnswer: end`); after `maxTurns` turns it ends as failed. With
 * `turnRewards`, the first search whose documents contain a gold answer pays 0.1.
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { searchCandidates } from './candidates.js';
import type { SearchDocument } from './documents.js';
import type { ToolSpec } from '../tools.js';
import { DEEPSEARCH_TOOLS, INVALID_ACTION_MESSAGE, parseSearchAction } from './protocol.js';
import { qaScore, substringMatchScore } from './qa-scoring.js';
import { type SearchQuestion, searchQuestions } from './questions.js';
import { formatInformation, searchCorpus } from './search-index.js';
import { type DeepSearchSettings, parseDeepSearchSettings } from './settings.js';

const NAME = 'deepsearch';

/** The instruction (AgentGym SearchQA's conversation_start[0], in our words). */
export const DEEPSEARCH_INSTRUCTION = [
  'You answer questions by searching a local encyclopedia of countries, provinces, US states and US airports.',
  'You may reason inside <think> and </think> first. If you lack knowledge, issue a search as <search> query </search> and stop: the top documents come back between <information> and </information>.',
  'You can search as many times as you want. When you know the answer, give it inside <answer> and </answer>, without explanations, for example <answer> Beijing </answer>.',
  'Do not write <information> yourself.',
].join('\n');

const CORRECT = 'Congratulations! You have answered the question correctly.';
const INCORRECT = 'Sorry, your answer is incorrect. Please try again.';
const INCORRECT_FINAL = 'Sorry, your answer is incorrect. The episode is over.';
/** Shaped reward (`turnRewards`) of the first search whose passages contain a gold answer. */
export const SEARCH_HIT_REWARD = 0.1;

/**
 * One question at a time.
 * @example
 * const env = new DeepSearchEnvironment();
 * env.reset(0);
 * await env.step('<search>France</search>');
 */
export class DeepSearchEnvironment implements Environment {
  readonly name = NAME;
  readonly settings: DeepSearchSettings;
  private item: SearchQuestion | null = null;
  private lastDocs: SearchDocument[] = [];
  private searched = new Set<string>();
  /** A search has returned a passage containing a gold answer (for the shaped reward). */
  private goldSeen = false;
  private turns = 0;
  private done = false;
  private closed = false;
  private log: string[] = [];

  constructor(options: EnvironmentOptions = {}) {
    this.settings = parseDeepSearchSettings(options);
  }

  instruction(): string {
    return DEEPSEARCH_INSTRUCTION;
  }

  /** Starts question `index` (`deepsearch_<index>`); ids past the bank are test repeats (see `testRepeats`) of question `index % bank size`. */
  reset(index: number): Observation {
    this.assertOpen('reset');
    const { items } = searchQuestions();
    const limit = items.length * this.settings.testRepeats;
    const item = Number.isInteger(index) && index >= 0 && index < limit ? items[index % items.length] : undefined;
    if (item === undefined) throw new EnvironmentError(NAME, `reset: task index must be an integer in [0, ${limit}), got ${index}`);
    this.item = item;
    this.lastDocs = [];
    this.searched = new Set();
    this.goldSeen = false;
    this.turns = 0;
    this.done = false;
    this.log = [];
    return this.observation(`Answer the question, searching as needed with <search> query </search>; give the final answer as <answer> text </answer>.\nQuestion: ${item.question}`);
  }

  /** Applies one response (see the module comment). */
  step(actionText: string): StepResult {
    this.assertOpen('step');
    const item = this.item;
    if (item === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (this.done) return { observation: { text: 'The episode is over. Reset the environment to start a new one.' }, reward: 0, done: true, success: false, info: { invalid: true, error: 'episode-over' } };
    this.turns++;
    const action = parseSearchAction(typeof actionText === 'string' ? actionText : '');
    if (action.kind === 'invalid') {
      this.log.push('invalid');
      return this.afterTurn(action.message ?? INVALID_ACTION_MESSAGE, { invalid: true, error: action.message === undefined ? 'no-tag' : 'bad-tool-call' });
    }
    if (action.kind === 'search') {
      const hits = searchCorpus(action.query, this.settings.topK);
      this.lastDocs = hits.map((h) => h.doc);
      this.searched.add(action.query);
      this.log.push(`search "${action.query}" -> ${hits.map((h) => h.doc.title).join(' | ') || 'nothing'}`);
      const found = this.settings.turnRewards && !this.goldSeen && hits.some((h) => substringMatchScore(h.doc.text, item.answers) === 1);
      if (found) this.goldSeen = true;
      return this.afterTurn(formatInformation(hits), { invalid: false, action: 'search', query: action.query.slice(0, 200), hits: hits.length }, found ? SEARCH_HIT_REWARD : 0);
    }
    const score = qaScore(this.settings.metric, action.answer, item.answers);
    const correct = score === 1;
    this.log.push(`answer "${action.answer}" (${correct ? 'correct' : 'incorrect'}${this.settings.metric === 'em' ? '' : `, ${this.settings.metric} ${score.toFixed(2)}`})`);
    if (correct || this.settings.wrongAnswer === 'end') {
      this.done = true;
      return { observation: { text: correct ? CORRECT : INCORRECT_FINAL }, reward: score, done: true, success: correct, info: { invalid: false, action: 'answer', answer: action.answer.slice(0, 200), template: item.template, correct } };
    }
    return this.afterTurn(INCORRECT, { invalid: false, action: 'answer', answer: action.answer.slice(0, 200), correct: false });
  }

  tools(): readonly ToolSpec[] {
    return DEEPSEARCH_TOOLS;
  }

  close(): void {
    this.closed = true;
    this.item = null;
  }

  render(): string {
    const item = this.item;
    if (item === null) return '(no episode)';
    return [`deepsearch_${item.index} [${item.template}, ${item.split}]`, `Question: ${item.question}`, `Gold: ${item.answers.join(' | ')}`, ...this.log.map((l, i) => `${i + 1}. ${l}`), `Turn ${this.turns}/${this.settings.maxTurns}${this.done ? ' (done)' : ''}`].join('\n');
  }

  /** The current question (solver, viewer). */
  current(): SearchQuestion | null {
    return this.item;
  }

  private afterTurn(text: string, info: Record<string, string | number | boolean | null>, reward = 0): StepResult {
    if (this.turns >= this.settings.maxTurns) {
      this.done = true;
      return { observation: { text: `${text}\nYou have used all ${this.settings.maxTurns} turns without a correct answer; the episode is over.` }, reward, done: true, success: false, info: { ...info, truncated: true } };
    }
    return { observation: this.observation(text), reward, done: false, success: false, info };
  }

  private observation(text: string): Observation {
    if (!this.settings.candidates || this.item === null) return { text };
    const actions = searchCandidates(this.item.question, this.lastDocs, this.searched);
    if (actions.length === 0) return { text };
    return { text: `${text}\nAvailable actions: [${actions.map((a) => `"${a}"`).join(', ')}]`, availableActions: actions };
  }

  private assertOpen(method: string): void {
    if (this.closed) throw new EnvironmentError(NAME, `${method} called after close`);
  }
}
