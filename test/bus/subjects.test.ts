import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { assertPublishSubject, assertSubscribePattern, compileSubjectPattern, subjectMatches } from '../../src/bus/subjects.js';

describe('subjects', () => {
  it('matches literal subjects exactly', () => {
    expect(subjectMatches('a.b', 'a.b')).toBe(true);
    expect(subjectMatches('a.b', 'a.b.c')).toBe(false);
    expect(subjectMatches('a.b', 'a')).toBe(false);
  });

  it('matches * to exactly one token', () => {
    const match = compileSubjectPattern('env.*.step');
    expect(match('env.babyai.step')).toBe(true);
    expect(match('env.step')).toBe(false);
    expect(match('env.a.b.step')).toBe(false);
    expect(subjectMatches('*', 'x')).toBe(true);
    expect(subjectMatches('*', 'x.y')).toBe(false);
  });

  it('matches > to one or more trailing tokens', () => {
    const match = compileSubjectPattern('metrics.>');
    expect(match('metrics.loss')).toBe(true);
    expect(match('metrics.loss.policy')).toBe(true);
    expect(match('metrics')).toBe(false);
    expect(subjectMatches('*.>', 'a.b.c')).toBe(true);
    expect(subjectMatches('>', 'a')).toBe(true);
  });

  it('rejects malformed patterns naming the subject', () => {
    for (const bad of ['', 'a..b', '.a', 'a.', 'a.>.b', 'a.b*', 'a b', 'a.>x']) {
      expect(() => assertSubscribePattern(bad), bad).toThrow(InvalidArgumentError);
    }
    expect(() => assertSubscribePattern('a.>.b')).toThrow(/may only be the last token/);
  });

  it('rejects wildcards in published subjects', () => {
    expect(() => assertPublishSubject('a.*')).toThrow(/wildcards are not allowed/);
    expect(() => assertPublishSubject('a.>')).toThrow(InvalidArgumentError);
    expect(() => assertPublishSubject('episode.3.done')).not.toThrow();
  });
});
