/**
 * Structured outputs in `POST /v1/chat/completions`: OpenAI's `response_format` (`text`,
 * `json_object`, `json_schema` with `json_schema.schema`) and vLLM's `guided_json` (a schema, or its
 * JSON text). A JSON format keeps the reply to the grammar of a JSON value
 * (`../models/constrain/json-schema-grammar.ts`): any object for `json_object`, what the schema
 * admits otherwise, so the reply parses (and fits the schema as far as the grammar enforces it)
 * unless `max_tokens` runs out first. An LLM-as-judge can ask for `{"score": …}` and always read it.
 */
import { z } from 'zod';
import { END, type GrammarState } from '../models/constrain/grammar-state.js';
import { compileSchema, SchemaGrammarError } from '../models/constrain/json-schema-grammar.js';
import { ApiError } from './openai-errors.js';

/** `response_format` as OpenAI has it. */
export const responseFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      json_schema: z
        .object({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" or "-", at most 64'),
          description: z.string().optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullish(),
        })
        .strict(),
    })
    .strict(),
]);

/** vLLM's `guided_json`: a schema, or the schema as JSON text. */
export const guidedJsonSchema = z.union([z.record(z.string(), z.unknown()), z.string()]);

export type ResponseFormat = z.output<typeof responseFormatSchema>;

/**
 * The grammar of the reply a request asks for, or null for free text. Throws an `ApiError`
 * naming the parameter whose schema is not one.
 * @example responseGrammar({ type: 'json_schema', json_schema: { name: 'score', schema: { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'] } } }, undefined)
 */
export function responseGrammar(format: ResponseFormat | null | undefined, guidedJson: z.output<typeof guidedJsonSchema> | null | undefined): GrammarState | null {
  if (guidedJson !== null && guidedJson !== undefined) {
    if (format !== null && format !== undefined && format.type !== 'text') throw ApiError.invalid('guided_json', "Invalid value for 'guided_json': not with a JSON response_format.", 'invalid_value');
    let schema: unknown = guidedJson;
    if (typeof guidedJson === 'string') {
      try {
        schema = JSON.parse(guidedJson);
      } catch (error) {
        throw ApiError.invalid('guided_json', `Invalid value for 'guided_json': not JSON (${(error as Error).message}).`, 'invalid_value');
      }
    }
    return grammarOf(schema, 'guided_json');
  }
  if (format === null || format === undefined || format.type === 'text') return null;
  if (format.type === 'json_object') return grammarOf({ type: 'object' }, 'response_format');
  // A json_schema format without a schema asks for JSON of any shape.
  return grammarOf(format.json_schema.schema ?? true, 'response_format.json_schema.schema');
}

function grammarOf(schema: unknown, param: string): GrammarState {
  let start: GrammarState | null;
  try {
    start = compileSchema(schema).start(END);
  } catch (error) {
    if (!(error instanceof SchemaGrammarError)) throw error;
    const field = `${param}${error.path.split('/').join('.')}`;
    throw ApiError.invalid(field, `Invalid value for '${field}': ${error.detail}.`, 'invalid_value');
  }
  if (start === null) throw ApiError.invalid(param, `Invalid value for '${param}': the schema admits no value.`, 'invalid_value');
  return start;
}
