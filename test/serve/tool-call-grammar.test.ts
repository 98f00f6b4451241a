/**
 * Forced tool calls kept to their grammar, over the real vocabularies of four template families
 * (test/models/chat/fixtures): random walks through the allowed ids always end, when they end, in a
 * reply the family's own parser reads as calls of the given tools whose arguments an independent
 * JSON-schema validator (Ajv) accepts; a named choice calls only that function;
 * `parallel_tool_calls: false` makes one call; a tool whose parameters are not a schema is refused
 * naming the field.
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { type ChatModelFileContents, parseChatModelFiles, readChatModelFileContents } from '../../src/models/chat/model-files.js';
import { TokenGrammar } from '../../src/models/constrain/token-grammar.js';
import { type RequestTool, type ToolCallReader, toolCallReader } from '../../src/serve/chat-tools.js';
import { hfTokenDecoder } from '../../src/serve/load-model.js';
import { ApiError } from '../../src/serve/openai-errors.js';
import { servedGrammarVocab } from '../../src/serve/served-grammar-vocab.js';
import { type ForcedChoice, toolCallGrammar } from '../../src/serve/tool-call-grammar.js';
import { fixtureDir, TOOL_FAMILIES, type ToolFamily } from '../models/chat/fixtures.js';

const TOOLS: RequestTool[] = [
  {
    type: 'function',
    function: {
      name: 'guess',
      parameters: { type: 'object', properties: { word: { type: 'string', minLength: 1, maxLength: 5 }, strict: { type: 'boolean' }, row: { type: 'integer' } }, required: ['word'] },
    },
  },
  { type: 'function', function: { name: 'search', parameters: { type: 'object', properties: { query: { type: 'string', maxLength: 6 }, topk: { enum: [1, 3, 5] } }, required: ['query', 'topk'] } } },
  { type: 'function', function: { name: 'hint', parameters: { type: 'object', properties: {} } } },
];

const ajv = new Ajv({ strict: false });
const validators = new Map(TOOLS.map((t) => [t.function.name, ajv.compile(t.function.parameters as object)]));

interface Family {
  readonly reader: ToolCallReader;
  readonly grammar: (choice: ForcedChoice, parallel: boolean) => TokenGrammar;
  readonly decode: (ids: number[]) => string;
  readonly stops: readonly number[];
}

async function family(name: ToolFamily): Promise<Family> {
  const contents: ChatModelFileContents = await readChatModelFileContents(fixtureDir(name));
  const files = parseChatModelFiles(contents, { folder: fixtureDir(name) });
  const reader = toolCallReader(files.template as NonNullable<typeof files.template>, files.tokenizer, files.stopTokenIds);
  if (typeof reader === 'string') throw new Error(reader);
  const tokens = hfTokenDecoder(files.tokenizer, contents.tokenizerJson);
  const literals = [reader.shape.before, reader.shape.between, ...reader.shape.tail, ...(reader.shape.separator ?? [])].filter((t): t is string => typeof t === 'string');
  const vocab = servedGrammarVocab(tokens, files.tokenizer.vocabSize, files.stopTokenIds, literals);
  return {
    reader,
    grammar: (choice, parallel) => new TokenGrammar(vocab, toolCallGrammar(reader.shape, TOOLS, choice, parallel), files.stopTokenIds),
    decode: (ids) => tokens.decode(ids, true),
    stops: files.stopTokenIds,
  };
}

/**
 * Generates with `grammar` from a random stand-in for a model: each allowed id drawn with a weight
 * that favours short pieces and makes whitespace rare (as a trained model writes JSON), the stop
 * ids weighted `stopWeight`. Returns the reply's text, or null when it did not end within `budget`.
 */
function walk(f: Family, grammar: TokenGrammar, rng: Rng, stopWeight = 50, budget = 300): string | null {
  const ids: number[] = [];
  for (let i = 0; i < budget; i++) {
    const allowed = Array.from(grammar.allowed());
    const weights = allowed.map((id) => {
      if (f.stops.includes(id)) return stopWeight;
      const text = f.decode([id]);
      return text.trim() === '' ? 0.05 : Math.exp(-0.7 * (text.length - 1));
    });
    let r = rng.next() * weights.reduce((x, y) => x + y, 0);
    let k = 0;
    while (k < allowed.length - 1 && r >= (weights[k] as number)) r -= weights[k++] as number;
    const id = allowed[k] as number;
    grammar.accept(id);
    if (f.stops.includes(id)) return f.decode(ids);
    ids.push(id);
  }
  return null;
}

describe.each(TOOL_FAMILIES)('forced tool calls kept to their grammar (%s)', (name) => {
  it("tool_choice 'required': every reply that ends is calls of the tools, with arguments their schemas accept", async () => {
    const f = await family(name);
    const rng = Rng.fromSeed(11);
    let ended = 0;
    const called = new Set<string>();
    for (let k = 0; k < 40; k++) {
      const reply = walk(f, f.grammar('required', true), rng);
      if (reply === null) continue;
      ended++;
      const read = f.reader.read(f.reader.opener() + reply);
      expect(read.kind, `${f.reader.opener()}${reply}: ${JSON.stringify(read)}`).toBe('calls');
      if (read.kind !== 'calls') continue;
      for (const call of read.calls) {
        const validate = validators.get(call.name);
        expect(validators.has(call.name), `unknown tool ${call.name}`).toBe(true);
        expect(validate?.(call.arguments), `${call.name}(${JSON.stringify(call.arguments)}): ${JSON.stringify(validate?.errors)}`).toBe(true);
        called.add(call.name);
      }
    }
    expect(ended).toBeGreaterThanOrEqual(20);
    expect(called.size).toBeGreaterThanOrEqual(2);
  });

  it('a named function: one call of it, its arguments accepted by its schema', async () => {
    const f = await family(name);
    const rng = Rng.fromSeed(12);
    let ended = 0;
    for (let k = 0; k < 30; k++) {
      const reply = walk(f, f.grammar({ name: 'search' }, true), rng);
      if (reply === null) continue;
      ended++;
      const read = f.reader.read(f.reader.opener('search') + reply);
      expect(read.kind === 'calls' && read.calls.length === 1 && read.calls[0]?.name === 'search', `${f.reader.opener('search')}${reply}`).toBe(true);
      if (read.kind === 'calls') expect(validators.get('search')?.(read.calls[0]?.arguments)).toBe(true);
    }
    expect(ended).toBeGreaterThanOrEqual(15);
  });

  it('several calls a reply only where the template writes them, and never with parallel_tool_calls false', async () => {
    const f = await family(name);
    const counts = (parallel: boolean) => {
      const rng = Rng.fromSeed(13);
      const out: number[] = [];
      for (let k = 0; k < 40; k++) {
        // A model that rarely stops where it may go on: it writes another call where one is allowed.
        const reply = walk(f, f.grammar('required', parallel), rng, 0.02);
        if (reply === null) continue;
        const read = f.reader.read(f.reader.opener() + reply);
        expect(read.kind, reply).toBe('calls');
        if (read.kind === 'calls') out.push(read.calls.length);
      }
      expect(out.length).toBeGreaterThanOrEqual(10);
      return out;
    };
    expect(Math.max(...counts(false))).toBe(1);
    const parallel = counts(true);
    if (f.reader.shape.separator === null) expect(Math.max(...parallel)).toBe(1);
    else expect(Math.max(...parallel)).toBeGreaterThan(1);
  });
});

describe('a tool whose parameters are not a schema', () => {
  it('is refused naming the field at fault', async () => {
    const f = await family('qwen2.5');
    const bad: RequestTool[] = [TOOLS[0] as RequestTool, { type: 'function', function: { name: 'x', parameters: { type: 'object', properties: { n: { type: 'integr' } } } } }];
    let caught: unknown;
    try {
      toolCallGrammar(f.reader.shape, bad, 'required', true);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).message).toMatch(/tools\[1\]\.function\.parameters\.properties\.n\.type.*unknown type "integr"/);
  });
});
