/**
 * `npm run bench -- tokenizer`: encoding speed of a pretrained model's tokenizer.json on
 * observation-sized texts (a BabyAI observation with its action list, ~150 tokens), in one run:
 *
 * - @huggingface/tokenizers as it is, vs HfTokenizer (the same library with turnwise's compat
 *   rewrites; its text cache off), per fixture family (test/models/chat/fixtures/);
 * - HfTokenizer with its text cache when each observation repeats 8 times (a GRPO group);
 * - turnwise's own BpeTokenizer (caches off) vs @huggingface/tokenizers on the same tokenizer.json;
 * - ChatContextBuilder.observationDelta per turn (template render + encode of the synthetic prefix
 *   and the new user message) on the Qwen2.5 fixture;
 * - trainBpe to a 1024 vocabulary on ~2 MB of BabyAI random-play text (seconds, MB/s).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Tokenizer as JsTokenizer } from '@huggingface/tokenizers';
import { babyaiCorpus } from '../src/envs/babyai/corpus.js';
import { ChatContextBuilder } from '../src/models/chat/context-builder.js';
import { loadChatModelFiles } from '../src/models/chat/model-files.js';
import { BpeTokenizer } from '../src/models/tokenizer/bpe.js';
import { HfTokenizer } from '../src/models/tokenizer/hf-tokenizer.js';
import { trainBpe } from '../src/models/tokenizer/train.js';

const FIXTURES = 'test/models/chat/fixtures';
const OBJECTS = ['red ball', 'grey key', 'blue box', 'yellow door', 'purple ball', 'green key'];

function observation(i: number): string {
  const a = OBJECTS[i % 6];
  const b = OBJECTS[(i * 7 + 3) % 6];
  return `In front of you in this room, you can see several objects: There is a ${a} ${1 + (i % 3)} ${1 + (i % 11)} steps in front of you and ${i % 5} steps to your left. There is a ${b} 1 ${2 + (i % 7)} steps in front of you. The room has walls around you. You are facing a wall ${1 + (i % 4)} steps away. You are not carrying anything.\nAvailable actions: ["turn left", "turn right", "move forward", "go to ${a} ${1 + (i % 3)}", "go to ${b} 1", "pick up ${b} 1", "check available actions"]`;
}

function tokensPerSecond(texts: readonly string[], encode: (text: string) => number, seconds = 1.5): number {
  for (const t of texts.slice(0, 50)) encode(t); // warm-up (JIT), distinct from the timed texts' order
  let tokens = 0;
  let i = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) tokens += encode(texts[i++ % texts.length]);
  return tokens / ((performance.now() - start) / 1000);
}

const fmt = (x: number): string => `${Math.round(x).toLocaleString('en-US')}`;

export async function main(): Promise<void> {
  const distinct = Array.from({ length: 5000 }, (_, i) => observation(i));
  console.log('tokens/s encoding distinct observation-sized texts (machine shared; ratios matter more than figures)\n');
  console.log('family      tokens/text  @hf/tokenizers  HfTokenizer  ratio');
  for (const family of ['qwen2.5', 'llama3', 'smollm2', 'mistral']) {
    const json = JSON.parse(readFileSync(`${FIXTURES}/${family}/tokenizer.json`, 'utf8'));
    const raw = new JsTokenizer(json, {});
    const ours = HfTokenizer.fromJSON(json, { textCacheSize: 0 });
    // The library keeps its own BPE cache of pre-tokens (words); both paths share that effect.
    const rawRate = tokensPerSecond(distinct, (t) => raw.encode(t, { add_special_tokens: false }).ids.length);
    const oursRate = tokensPerSecond(distinct, (t) => ours.encode(t).length);
    const perText = ours.encode(distinct[0]).length;
    console.log(`${family.padEnd(11)} ${String(perText).padStart(11)}  ${fmt(rawRate).padStart(14)}  ${fmt(oursRate).padStart(11)}  ${(oursRate / rawRate).toFixed(2)}`);
  }

  const qwenJson = JSON.parse(readFileSync(`${FIXTURES}/qwen2.5/tokenizer.json`, 'utf8'));
  const grouped = distinct.flatMap((t) => Array.from({ length: 8 }, () => t));
  const cached = HfTokenizer.fromJSON(qwenJson);
  const uncached = HfTokenizer.fromJSON(qwenJson, { textCacheSize: 0 });
  const cachedRate = tokensPerSecond(grouped, (t) => cached.encode(t).length);
  const uncachedRate = tokensPerSecond(grouped, (t) => uncached.encode(t).length);
  console.log(`\nqwen2.5, each text 8 times in a row (a GRPO group): cache on ${fmt(cachedRate)}, off ${fmt(uncachedRate)}, ratio ${(cachedRate / uncachedRate).toFixed(1)}`);

  const bpe = trainBpe(distinct.slice(0, 400), { vocabSize: 700 });
  const own = BpeTokenizer.fromJSON(bpe.toJSON(), { textCacheSize: 0, chunkCacheSize: 0 });
  const ownRaw = new JsTokenizer(bpe.toJSON(), {});
  const ownRate = tokensPerSecond(distinct, (t) => own.encode(t).length);
  const ownRawRate = tokensPerSecond(distinct, (t) => ownRaw.encode(t, { add_special_tokens: false }).ids.length);
  console.log(`turnwise tokenizer.json (vocab 700): BpeTokenizer (caches off) ${fmt(ownRate)}, @huggingface/tokenizers ${fmt(ownRawRate)}, ratio ${(ownRate / ownRawRate).toFixed(2)}`);

  const files = await loadChatModelFiles(`${FIXTURES}/qwen2.5`);
  if (files.template === undefined) throw new Error('fixture without template');
  const chat = ChatContextBuilder.create(files.template, files.tokenizer, { stopTokenIds: files.stopTokenIds, cacheSize: 0 });
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < 1500) chat.observationDelta(distinct[n++ % distinct.length]);
  console.log(`ChatContextBuilder.observationDelta (qwen2.5, render + encode, no cache): ${((performance.now() - start) / n).toFixed(3)} ms per turn`);

  // Training a run's own tokenizer happens once per run, before step 1 (the default: vocab 512).
  const corpus = babyaiCorpus(undefined, 400, 1);
  const megabytes = corpus.reduce((sum, t) => sum + Buffer.byteLength(t), 0) / 1e6;
  const trainStart = performance.now();
  const trained = trainBpe(corpus, { vocabSize: 1024 });
  const trainSeconds = (performance.now() - trainStart) / 1000;
  console.log(`trainBpe to vocab ${trained.vocabSize} on ${megabytes.toFixed(2)} MB: ${trainSeconds.toFixed(2)} s (${(megabytes / trainSeconds).toFixed(2)} MB/s; a run's tokenizer costs this once)`);
}
