import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import type { ContextInput, ContextPolicy } from '../../src/models/context.js';
import { buildContext, encodeActionChoices } from '../../src/models/context.js';
import { BpeTokenizer } from '../../src/models/tokenizer/bpe.js';
import { BYTE_ID_OFFSET, baseVocab } from '../../src/models/tokenizer/tables.js';

// A merge-free byte tokenizer: every character of ASCII text is one id (byte + 6), so expected
// sequences can be written by hand.
const tok = new BpeTokenizer({ vocab: baseVocab(), merges: [] });
const t = (s: string): number[] => [...Buffer.from(s)].map((b) => b + BYTE_ID_OFFSET);
const [BOS, SYS, OBS, ACT, END] = [1, 2, 3, 4, 5];

// Stored action ids: deliberately NOT what the text would encode to, to prove they are used verbatim.
const A1 = Int32Array.of(200, 201, END);
const A2 = Int32Array.of(210, END);
const A3 = Int32Array.of(220, 221, 222, END);
const input: ContextInput = {
  instruction: 'go',
  pastTurns: [
    { observationText: 'o1', actionTokens: A1 },
    { observationText: 'o2', actionTokens: A2 },
    { observationText: 'o3', actionTokens: A3 },
  ],
  observationText: 'now',
};
const policy = (history: ContextPolicy['history'], maxContextTokens = 1000, includeInstruction = true): ContextPolicy => ({
  history,
  includeInstruction,
  maxContextTokens,
});

describe('buildContext', () => {
  it('lays out bos, system instruction and the current observation with history 0', () => {
    expect([...buildContext(tok, input, policy(0))]).toEqual([BOS, SYS, ...t('go'), OBS, ...t('now'), ACT]);
  });

  it('keeps the last 2 past turns with their stored action ids when history is 2', () => {
    expect([...buildContext(tok, input, policy(2))]).toEqual([
      BOS,
      SYS,
      ...t('go'),
      ...[OBS, ...t('o2'), ACT, ...A2],
      ...[OBS, ...t('o3'), ACT, ...A3],
      OBS,
      ...t('now'),
      ACT,
    ]);
  });

  it('keeps every past turn with full history and omits the system segment when asked', () => {
    expect([...buildContext(tok, input, policy('full', 1000, false))]).toEqual([
      BOS,
      ...[OBS, ...t('o1'), ACT, ...A1],
      ...[OBS, ...t('o2'), ACT, ...A2],
      ...[OBS, ...t('o3'), ACT, ...A3],
      OBS,
      ...t('now'),
      ACT,
    ]);
  });

  it('keeps all turns when history exceeds the number of past turns', () => {
    expect(buildContext(tok, input, policy(10))).toEqual(buildContext(tok, input, policy('full')));
  });

  it('drops the oldest past turns first when over the token budget', () => {
    // Full length: 4 (bos sys go) + 7 + 6 + 8 + 5 (obs now act) = 30. Budget 24 drops turn 1 only.
    expect(buildContext(tok, input, policy('full')).length).toBe(30);
    expect([...buildContext(tok, input, policy('full', 24))]).toEqual([
      BOS,
      SYS,
      ...t('go'),
      ...[OBS, ...t('o2'), ACT, ...A2],
      ...[OBS, ...t('o3'), ACT, ...A3],
      OBS,
      ...t('now'),
      ACT,
    ]);
    // Budget 16 leaves room for turn 3 only (4 + 8 + 5 = 17 > 16): all past turns go.
    expect([...buildContext(tok, input, policy('full', 16))]).toEqual([BOS, SYS, ...t('go'), OBS, ...t('now'), ACT]);
  });

  it('then cuts the front of the current observation, keeping bos and the system segment', () => {
    const long = { ...input, observationText: 'abcdefgh' };
    expect([...buildContext(tok, long, policy('full', 9))]).toEqual([BOS, SYS, ...t('go'), OBS, ...t('fgh'), ACT]);
    expect([...buildContext(tok, long, policy(0, 6))]).toEqual([BOS, SYS, ...t('go'), OBS, ACT]);
  });

  it('never exceeds maxContextTokens', () => {
    for (let max = 6; max <= 40; max++) {
      expect(buildContext(tok, input, policy('full', max)).length).toBeLessThanOrEqual(max);
    }
  });

  it('throws naming maxContextTokens when the fixed head cannot fit', () => {
    expect(() => buildContext(tok, input, policy(0, 5))).toThrow(InvalidArgumentError);
    expect(() => buildContext(tok, input, policy(0, 5))).toThrow(/maxContextTokens/);
  });

  it('rejects a negative or fractional history', () => {
    expect(() => buildContext(tok, input, policy(-1))).toThrow(/policy\.history/);
    expect(() => buildContext(tok, input, policy(1.5))).toThrow(/policy\.history/);
  });
});

describe('encodeActionChoices', () => {
  it('encodes each action followed by <|end|>', () => {
    const choices = encodeActionChoices(tok, ['turn left', 'go to red ball 1']);
    expect(choices.map((c) => [...c])).toEqual([
      [...t('turn left'), END],
      [...t('go to red ball 1'), END],
    ]);
  });

  it('returns fresh arrays from its cache', () => {
    const [first] = encodeActionChoices(tok, ['move forward']);
    first.fill(0);
    expect([...encodeActionChoices(tok, ['move forward'])[0]]).toEqual([...t('move forward'), END]);
  });
});
