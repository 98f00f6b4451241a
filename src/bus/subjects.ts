/**
 * NATS-style subjects: dot-separated, non-empty tokens without whitespace. In a subscription
 * pattern, `*` matches exactly one token and `>` (last token only) matches one or more tokens.
 * Published subjects are concrete (no wildcards). Same rules as nats-server, so that a subject that
 * works on the memory bus works on NATS.
 */
import { InvalidArgumentError } from '../core/errors.js';

/** A compiled subscription pattern. */
export type SubjectMatcher = (subject: string) => boolean;

const WHITESPACE = /\s/;

function checkTokens(subject: string, property: string, wildcards: boolean): string[] {
  if (typeof subject !== 'string' || subject.length === 0) {
    throw InvalidArgumentError.format(property, `expected a non-empty subject such as "env.step", got ${JSON.stringify(subject)}`);
  }
  const tokens = subject.split('.');
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.length === 0) throw InvalidArgumentError.format(property, `empty token in subject "${subject}"`);
    if (WHITESPACE.test(token)) throw InvalidArgumentError.format(property, `whitespace in subject "${subject}"`);
    const wild = token.includes('*') || token.includes('>');
    if (!wild) continue;
    if (!wildcards) throw InvalidArgumentError.format(property, `wildcards are not allowed when sending, got "${subject}"`);
    if (token !== '*' && token !== '>') {
      throw InvalidArgumentError.format(property, `a wildcard must be a whole token ("*" or ">"), got "${token}" in "${subject}"`);
    }
    if (token === '>' && i !== tokens.length - 1) {
      throw InvalidArgumentError.format(property, `">" may only be the last token, got "${subject}"`);
    }
  }
  return tokens;
}

/**
 * Throws `InvalidArgumentError` unless `subject` is a valid concrete subject (no wildcards).
 * @example assertPublishSubject('episode.3.done'); // ok; 'episode.*' throws
 */
export function assertPublishSubject(subject: string): void {
  checkTokens(subject, 'subject', false);
}

/**
 * Throws `InvalidArgumentError` unless `pattern` is a valid subscription pattern.
 * @example assertSubscribePattern('episode.*.done'); // ok; 'episode.>.x' throws
 */
export function assertSubscribePattern(pattern: string): void {
  checkTokens(pattern, 'subject', true);
}

/**
 * Validates a subscription pattern and returns a fast matcher for concrete subjects.
 * @example
 * const match = compileSubjectPattern('env.*.>');
 * match('env.babyai.step.3'); // true
 * match('env.babyai'); // false: '>' needs at least one token
 */
export function compileSubjectPattern(pattern: string): SubjectMatcher {
  const tokens = checkTokens(pattern, 'subject', true);
  const hasWildcard = tokens.some((t) => t === '*' || t === '>');
  if (!hasWildcard) return (subject) => subject === pattern;
  const tail = tokens[tokens.length - 1] === '>';
  const fixed = tail ? tokens.slice(0, -1) : tokens;
  return (subject) => {
    const parts = subject.split('.');
    if (tail ? parts.length <= fixed.length : parts.length !== fixed.length) return false;
    for (let i = 0; i < fixed.length; i++) {
      if (fixed[i] !== '*' && fixed[i] !== parts[i]) return false;
    }
    return true;
  };
}

/**
 * True when concrete `subject` matches subscription `pattern`.
 * @example subjectMatches('metrics.>', 'metrics.loss.policy') // true
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  return compileSubjectPattern(pattern)(subject);
}
