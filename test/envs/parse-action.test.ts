import { describe, expect, it } from 'vitest';
import { MULTIPLE_ACTIONS_MESSAGE, normaliseAction, parseAction } from '../../src/envs/parse-action.js';

describe('parseAction', () => {
  it('takes the action after "Action:" in the Thought/Action format', () => {
    const parsed = parseAction('Thought:\nThe red ball is ahead.\n\nAction:\ngo to red ball 1');
    expect(parsed).toEqual({ ok: true, action: 'go to red ball 1', thought: 'The red ball is ahead.' });
  });

  it('reads the action on the same line as the marker and ignores later lines', () => {
    const parsed = parseAction('Thought: hmm\nAction: turn left\nI hope this works');
    expect(parsed.ok && parsed.action).toBe('turn left');
  });

  it('accepts a bare action', () => {
    expect(parseAction('turn right')).toEqual({ ok: true, action: 'turn right', thought: null });
  });

  it('answers more than one Action with the AgentGym error message', () => {
    const parsed = parseAction('Action: turn left\nThought: no wait\nAction: turn right');
    expect(parsed).toEqual({ ok: false, reason: 'multiple-actions', message: MULTIPLE_ACTIONS_MESSAGE });
  });

  it('normalises case, strips punctuation and collapses whitespace', () => {
    expect(parseAction('Action:   Go To  the Red-Ball 1!!  ').ok && parseAction('Action:   Go To  the Red-Ball 1!!  ')).toMatchObject({ action: 'go to the redball 1' });
    expect(normaliseAction('  pick\tup, "grey key" 2 \n')).toBe('pick up, grey key 2');
    expect(normaliseAction('Move Forward', false)).toBe('Move Forward');
  });

  it('rejects empty text and an empty Action', () => {
    expect(parseAction('   ')).toMatchObject({ ok: false, reason: 'empty' });
    expect(parseAction('Thought: x\nAction:   ')).toMatchObject({ ok: false, reason: 'empty' });
  });

  it('rejects a Thought without an Action', () => {
    expect(parseAction('Thought: I should turn left')).toMatchObject({ ok: false, reason: 'missing-action' });
  });

  it('drops a trailing end-of-sequence marker', () => {
    expect(parseAction('Action: move forward</s>')).toMatchObject({ ok: true, action: 'move forward' });
  });

  it('treats the marker case-sensitively, as AgentGym does', () => {
    expect(parseAction('Thought: the action: is unclear\nAction: turn left')).toMatchObject({ ok: true, action: 'turn left' });
  });
});
