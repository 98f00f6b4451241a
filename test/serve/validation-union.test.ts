import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../../src/serve/openai-errors.js';
import { MAX_STOP_CHARS, MAX_STOP_STRINGS, samplingFields } from '../../src/serve/sampling-params.js';
import { parseBody } from '../../src/serve/validation.js';

const schema = z.object(samplingFields).strict();

function refusal(body: unknown): ApiError {
  try {
    parseBody(schema, body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a 400');
}

describe('a value of the right type that breaks its limits, in a union field (stop)', () => {
  it(`names the limit for ${MAX_STOP_STRINGS + 1} stop strings, not a type it has`, () => {
    const error = refusal({ stop: Array.from({ length: MAX_STOP_STRINGS + 1 }, (_, i) => `s${i}`) });
    expect(error.body().error).toEqual({
      message: `Invalid value for 'stop': expected at most ${MAX_STOP_STRINGS} items, but got an array of ${MAX_STOP_STRINGS + 1} items instead.`,
      type: 'invalid_request_error',
      param: 'stop',
      code: 'invalid_value',
    });
  });

  it('names the stop string that is too long, by index', () => {
    const error = refusal({ stop: ['ok', 'x'.repeat(MAX_STOP_CHARS + 1)] });
    expect(error.param).toBe('stop[1]');
    expect(error.message).toBe(`Invalid value for 'stop[1]': expected at most ${MAX_STOP_CHARS} characters, but got a string of ${MAX_STOP_CHARS + 1} characters instead.`);
  });

  it('still says what types it takes for a value of neither', () => {
    expect(refusal({ stop: 5 }).message).toBe("Invalid type for 'stop': expected a string or an array of strings, but got an integer instead.");
  });
});
