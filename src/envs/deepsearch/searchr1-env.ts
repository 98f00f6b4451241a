/**
 * Deep search as Search-R1 runs it: questions from the user's QA files (`qa-dataset.ts`), passages
 * from a retriever (`local-bm25.ts` over a JSONL corpus, or `remote-retriever.ts`), actions as
 * `<search>…</search>` / `<answer>…</answer>` tags or `search` / `answer` tool calls. A search
 * returns Search-R1's `<information>Doc i(Title: …) text …</information>` block; the answer is
 * scored by `metric` (em, subem, f1) and, by default, ends the episode (`wrongAnswer: end`); the
 * episode also ends after `maxTurns` turns. Task ids: the training file's rows are 0..T-1, the
 * held-out file's rows T..T+H-1 (repeat k of held-out row j: T + j + k·(T+H)).
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import type { ToolSpec } from '../tools.js';
import { SEARCH_HIT_REWARD } from './env.js';
import { LocalBm25Retriever } from './local-bm25.js';
import { passageTitleAndText } from './passages.js';
import { DEEPSEARCH_TOOLS, INVALID_ACTION_MESSAGE, parseSearchAction } from './protocol.js';
import { type QaItem, readQaSet } from './qa-dataset.js';
import { qaScore, substringMatchScore } from './qa-scoring.js';
import { RemoteRetriever } from './remote-retriever.js';
import type { RetrievedPassage, Retriever } from './retriever.js';
import { type DeepSearchSettings, parseDeepSearchSettings } from './settings.js';

const NAME = 'deepsearch';

/** Search-R1's instruction (its `make_prefix` prompt, in our words), with the tool forms added. */
export const SEARCHR1_INSTRUCTION = [
  'Answer the given question. Reason inside <think> and </think> first every time you get new information.',
  'If you lack some knowledge, call the search engine with <search> query </search> (or the search tool); the top passages come back between <information> and </information>. You can search as many times as you want.',
  'When no further knowledge is needed, give the answer inside <answer> and </answer> (or with the answer tool), without detailed explanation, for example <answer> Beijing </answer>. Your first answer is final.',
].join('\n');

/**
 * Search-R1's `<information>` block of retrieved passages.
 * @example informationBlock([{ passage: { id: '1', contents: '"Paris"\nParis is …' }, score: 3 }]) // '<information>Doc 1(Title: "Paris") Paris is …\n</information>'
 */
export function informationBlock(hits: readonly RetrievedPassage[]): string {
  if (hits.length === 0) return '<information>No documents found.\n</information>';
  return `<information>${hits
    .map((h, i) => {
      const { title, text } = passageTitleAndText(h.passage.contents);
      return `Doc ${i + 1}(Title: ${title}) ${text}\n`;
    })
    .join('')}</information>`;
}

/** The retriever the settings name (local BM25 indexes are shared per corpus file). */
export function retrieverOf(settings: DeepSearchSettings): Retriever {
  if (settings.retriever !== undefined) return new RemoteRetriever({ url: settings.retriever.url, timeoutMs: settings.retriever.timeoutMs, retries: settings.retriever.retries });
  if (settings.corpus !== undefined) return new LocalBm25Retriever(settings.corpus);
  throw new EnvironmentError(NAME, 'no corpus or retriever in the settings');
}

/**
 * The row behind task `index` of the file-backed catalog, or null when out of range.
 * @example questionRow(settings, 0) // { split: 'train', row: 0 }
 */
export function questionRow(settings: DeepSearchSettings, index: number): { split: 'train' | 'test'; row: number } | null {
  if (settings.qa === undefined || !Number.isInteger(index) || index < 0) return null;
  const train = readQaSet(settings.qa.train).size;
  const test = readQaSet(settings.qa.test).size;
  if (index < train) return { split: 'train', row: index };
  const rest = index - train;
  const repeat = Math.floor(rest / (train + test));
  const within = rest - repeat * (train + test);
  if (repeat >= settings.testRepeats || within >= test) return null;
  return { split: 'test', row: within };
}

/**
 * One question at a time over files and a retriever.
 * @example
 * const env = new SearchR1Environment({ settings: { qa: { train: 'data/deepsearch/train.jsonl', test: 'data/deepsearch/test.jsonl' }, corpus: 'data/deepsearch/corpus.jsonl' } });
 * await env.reset(0);
 * await env.step('<search> capital of France </search>');
 */
export class SearchR1Environment implements Environment {
  readonly name = NAME;
  readonly settings: DeepSearchSettings;
  private readonly retriever: Retriever;
  private item: QaItem | null = null;
  private turns = 0;
  private done = false;
  private closed = false;
  private goldSeen = false;
  private log: string[] = [];

  constructor(options: EnvironmentOptions = {}) {
    this.settings = parseDeepSearchSettings(options);
    if (this.settings.qa === undefined) throw new EnvironmentError(NAME, 'SearchR1Environment needs env.settings.qa');
    this.retriever = retrieverOf(this.settings);
  }

  instruction(): string {
    return SEARCHR1_INSTRUCTION;
  }

  tools(): readonly ToolSpec[] {
    return DEEPSEARCH_TOOLS;
  }

  async reset(index: number): Promise<Observation> {
    this.assertOpen('reset');
    const qa = this.settings.qa as { train: string; test: string };
    const at = questionRow(this.settings, index);
    if (at === null) throw new EnvironmentError(NAME, `reset: task index ${index} is outside the QA files (see the catalog)`);
    const items = await readQaSet(at.split === 'train' ? qa.train : qa.test).items();
    this.item = items[at.row] as QaItem;
    this.turns = 0;
    this.done = false;
    this.goldSeen = false;
    this.log = [];
    return { text: `Question: ${this.item.question}` };
  }

  async step(actionText: string): Promise<StepResult> {
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
      const [hits = []] = await this.retriever.retrieve([action.query], this.settings.topK);
      if (this.closed) throw new EnvironmentError(NAME, 'closed while a search was running');
      this.log.push(`search "${action.query}" -> ${hits.map((h) => h.passage.id).join(', ') || 'nothing'}`);
      const found = this.settings.turnRewards && !this.goldSeen && hits.some((h) => substringMatchScore(h.passage.contents, item.goldenAnswers) === 1);
      if (found) this.goldSeen = true;
      return this.afterTurn(informationBlock(hits), { invalid: false, action: 'search', query: action.query.slice(0, 200), hits: hits.length }, found ? SEARCH_HIT_REWARD : 0);
    }
    const score = qaScore(this.settings.metric, action.answer, item.goldenAnswers);
    const correct = score === 1;
    this.log.push(`answer "${action.answer}" (${this.settings.metric} ${score.toFixed(2)})`);
    if (correct || this.settings.wrongAnswer === 'end') {
      this.done = true;
      const text = correct ? 'Your answer is correct.' : 'Your answer is incorrect. The episode is over.';
      return { observation: { text }, reward: score, done: true, success: correct, info: { invalid: false, action: 'answer', answer: action.answer.slice(0, 200), correct, score } };
    }
    return this.afterTurn('Sorry, your answer is incorrect. Please try again.', { invalid: false, action: 'answer', answer: action.answer.slice(0, 200), correct: false, score });
  }

  close(): void {
    this.closed = true;
    this.item = null;
    this.retriever.close?.();
  }

  render(): string {
    const item = this.item;
    if (item === null) return '(no episode)';
    return [`Question: ${item.question}`, `Gold: ${item.goldenAnswers.join(' | ')}`, `Retriever: ${this.retriever.description}`, ...this.log.map((l, i) => `${i + 1}. ${l}`), `Turn ${this.turns}/${this.settings.maxTurns}${this.done ? ' (done)' : ''}`].join('\n');
  }

  private afterTurn(text: string, info: Record<string, string | number | boolean | null>, reward = 0): StepResult {
    if (this.turns >= this.settings.maxTurns) {
      this.done = true;
      return { observation: { text: `${text}\nYou have used all ${this.settings.maxTurns} turns without an answer; the episode is over.` }, reward, done: true, success: false, info: { ...info, truncated: true } };
    }
    return { observation: { text }, reward, done: false, success: false, info };
  }

  private assertOpen(method: string): void {
    if (this.closed) throw new EnvironmentError(NAME, `${method} called after close`);
  }
}
