/**
 * LMRL-Gym Maze and Wordle (`agentenv-lmrlgym`, one server, routes under `/maze` and `/wordle`):
 * id key `id`; `/create` → `{id}`; Maze `/reset {id, game}` (0–25) → `{observation}`; Wordle
 * `/reset {id, seed}` → `{id, observation}`; `/step {id, action}` → `{observation, reward, done}`.
 * AgentGym's clients put a long introduction before the first observation (Maze: rules and an
 * example; Wordle: rules, the whole vocabulary from `GET /wordle/filtered_vocab?id=`, an example).
 * Neither server has `/close`: instances are pooled and reused.
 */
import { firstAction } from './parsers.js';
import { booleanAt, intAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter } from './types.js';

const REPLY_FORMAT = 'Thought:\n<your thought>\n\nAction:\n';

/** The four Maze moves. */
export const MAZE_MOVES: readonly string[] = ['move up', 'move down', 'move left', 'move right'];

const MAZE_INTRO = [
  'Reach the goal in as few moves as possible. Each round you are told where the goal is, where you are, and which walls surround you.',
  'Positions are "x, y": moving down adds 1 to x, moving right adds 1 to y.',
  'An example game:',
  '```',
  'environment: The goal is at position 8, 6. Your current position is at position 5, 6. There is a wall above you.',
  'action: move down',
  'environment: The goal is at position 8, 6. Your current position is at position 6, 6. There are walls to your right, to your left.',
  'action: move down',
  'environment: The goal is at position 8, 6. Your current position is at position 7, 6. There are walls to your right, to your left.',
  'action: move down',
  'environment: Success',
  '```',
  `Your moves are ${MAZE_MOVES.map((m) => `"${m}"`).join(', ')}. Reply in this format:`,
  `${REPLY_FORMAT}<your move>`,
  'A new game starts now. Choose the best move for the current state:',
].join('\n');

function wordleIntro(vocabulary: readonly string[]): string {
  return [
    'Guess a hidden 5-letter word in at most 6 tries, using as few as you can. Write a guess as its 5 letters separated by spaces, e.g. "s h i r e".',
    'Each guess is answered with 5 letters separated by spaces, one per position:',
    '"b": this letter is not in the word;',
    '"y": this letter is in the word, at another position;',
    '"g": this letter is in the word, at this position.',
    'A guess that is not a 5-letter word from the vocabulary is answered "invalid word".',
    'The vocabulary:',
    '```',
    vocabulary.join('\n'),
    '```',
    'For example, after',
    '```',
    'guess 1: p a n i c',
    'feedback 1: b b y b b',
    'guess 2: f e l o n',
    'feedback 2: g b b y g',
    '```',
    'the word starts with "f", ends with "n", has an "o" that is not fourth, and has none of p, a, i, c, e, l. A good reply would be:',
    'Thought:\nThe word looks like f _ _ _ n with an o before the fourth place and none of p a i c e l; "f r o w n" fits and tells where the o is.\n\nAction:\nf r o w n',
    'Reply in this format:',
    `${REPLY_FORMAT}<your guess>`,
    'A new game starts now. Every guess must be a word from the vocabulary.',
  ].join('\n');
}

/** @example mazeAdapter.resetBody(4, settings) // { game: 4 } */
export const mazeAdapter: AgentGymAdapter = {
  type: 'maze',
  title: 'Maze',
  idKey: 'id',
  hasClose: false,
  instruction: 'You are an expert at solving mazes.',
  createBody: () => undefined,
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'id'),
  resetBody: (index) => ({ game: index }),
  parseReset: (body) => ({ observation: `${MAZE_INTRO}\n${stringAt(objectOf(body, '/reset'), 'observation')}`, availableActions: MAZE_MOVES }),
  parseObservation: (body) => (typeof body === 'string' ? body : stringAt(objectOf(body, '/observation'), 'observation')),
  prepareAction: firstAction,
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done'), availableActions: MAZE_MOVES };
  },
  success: (reward, done) => done && reward >= 1,
};

/** @example wordleAdapter.resetBody(7, settings) // { seed: 7 } */
export const wordleAdapter: AgentGymAdapter = {
  type: 'wordle',
  title: 'Wordle',
  idKey: 'id',
  hasClose: false,
  instruction: 'You are an expert Wordle player.',
  createBody: () => undefined,
  parseCreate: (body) => intAt(objectOf(body, '/create'), 'id'),
  afterCreate: async (get, state) => {
    const vocabulary = await get('/filtered_vocab');
    if (!Array.isArray(vocabulary) || !vocabulary.every((w) => typeof w === 'string')) {
      throw new Error(`expected an array of words from GET /filtered_vocab, got ${JSON.stringify(vocabulary)?.slice(0, 120)}`);
    }
    state.vocabulary = vocabulary as string[];
  },
  resetBody: (index) => ({ seed: index }),
  parseReset: (body, state) => {
    stringAt(objectOf(body, '/reset'), 'observation');
    return { observation: wordleIntro(state.vocabulary ?? []) };
  },
  parseObservation: (body) => (typeof body === 'string' ? body : stringAt(objectOf(body, '/observation'), 'observation')),
  prepareAction: firstAction,
  parseStep: (body) => {
    const o = objectOf(body, '/step');
    return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done') };
  },
  success: (reward, done) => done && reward >= 1,
  invalidObservation: (text) => text === 'invalid word',
};
