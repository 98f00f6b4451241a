import { beforeAll, describe, expect, it } from 'vitest';
import '../../../src/envs/index.js';
import { Rng } from '../../../src/core/rng.js';
import { parseAction } from '../../../src/envs/parse-action.js';
import { getEnvironmentSpec } from '../../../src/envs/registry.js';
import { selectBackend } from '../../../src/backend/select.js';
import { chatText } from '../../../src/models/policy-text.js';
import { CHATML_IDS, chatmlFiles } from '../../../scripts/standin/chatml-files.js';
import { nextTokenBatch, trainNextToken } from '../../../scripts/standin/next-token.js';
import { randomTranscripts, transcriptSequences } from '../../../scripts/standin/transcripts.js';
import { trainBpe } from '../../../src/models/tokenizer/train.js';
import { TransformerModel } from '../../../src/models/transformer/model.js';

const settings = { levels: ['GoToRedBallNoDists'] };
const spec = getEnvironmentSpec('babyai');
const play = (seed: number) => randomTranscripts(spec.create({ settings }), spec.catalog({ settings }).indices('train').slice(0, 12), { episodes: 12, turns: 4 }, Rng.fromSeed(seed));
const transcripts = play(1);
const corpus = ['system\n', 'user\n', 'assistant\n', transcripts[0]?.instruction ?? '', ...transcripts.flatMap((t) => t.turns.flatMap((u) => [u.observationText, u.reply]))];
const bpe = trainBpe(corpus, { vocabSize: 400 });
const files = chatmlFiles(bpe, { modelMaxLength: 1024, maxNewTokens: 48 });
const chat = { system: 'Be brief.', acknowledge: 'OK.', history: 'full' as const, maxContext: 1024, maxResponseTokens: 4096 };
const text = chatText({ tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig, generationConfig: files.generationConfig }, chat);

beforeAll(async () => {
  await selectBackend('wasm');
});

describe('random-play transcripts', () => {
  it('answer every observation with one of its listed actions in the Thought/Action format, deterministically', () => {
    expect(play(1)).toEqual(transcripts);
    expect(play(2)).not.toEqual(transcripts);
    for (const t of transcripts) {
      for (const turn of t.turns) {
        const parsed = parseAction(turn.reply);
        expect(parsed.ok && parsed.thought !== null).toBe(true);
        const listed = JSON.parse(/Available actions: (.*)$/m.exec(turn.observationText)?.[1] ?? '[]') as string[];
        expect(listed).toContain(parsed.ok ? parsed.action : '');
      }
    }
    expect(transcripts.some((t) => t.success)).toBe(true);
  });
});

describe('the ChatML files of the stand-in', () => {
  it('render AgentGym conversations in ChatML with <|im_end|> ending each reply', () => {
    expect(text.endTokenId).toBe(CHATML_IDS.imEnd);
    expect(text.stopTokenIds).toContain(CHATML_IDS.imEnd);
    const t = transcripts[0];
    if (t === undefined) throw new Error('no transcript');
    const ids = text.context({ instruction: 'Go.', pastTurns: [], observationText: 'You see a wall.' });
    expect(text.decode(ids, true)).toBe('<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nGo.<|im_end|>\n<|im_start|>assistant\nOK.<|im_end|>\n<|im_start|>user\nYou see a wall.<|im_end|>\n<|im_start|>assistant\n');
    const reply = text.actionChoices([t.turns[0]?.reply ?? ''])[0] as Int32Array;
    expect(reply.at(-1)).toBe(CHATML_IDS.imEnd);
    expect(text.actionText(reply)).toBe(t.turns[0]?.reply);
    expect((files.tokenizerConfig as { chat_template?: string }).chat_template).toContain('<|im_start|>');
    expect(files.generationConfig).toMatchObject({ eos_token_id: [CHATML_IDS.imEnd, CHATML_IDS.pad], pad_token_id: CHATML_IDS.pad });
  });
});

describe('transcript sequences', () => {
  it('chain the turns and target exactly the reply tokens, the end-of-turn tokens included', () => {
    const t = transcripts.find((x) => x.turns.length >= 3);
    if (t === undefined) throw new Error('no long transcript');
    const sequences = transcriptSequences(text, t, 4096);
    expect(sequences).toHaveLength(1);
    const { ids, targets } = sequences[0] as (typeof sequences)[number];
    const replyIds = t.turns.flatMap((turn) => [...(text.actionChoices([turn.reply])[0] as Int32Array)]);
    expect([...targets].map((p) => ids[p + 1])).toEqual(replyIds);
    // The last context the runtime would build for this episode is a prefix of the sequence.
    const past = t.turns.slice(0, -1).map((turn) => ({ observationText: turn.observationText, actionTokens: text.actionChoices([turn.reply])[0] as Int32Array }));
    const last = text.context({ instruction: t.instruction, pastTurns: past, observationText: t.turns.at(-1)?.observationText ?? '' });
    expect([...ids.subarray(0, last.length)]).toEqual([...last]);
    // A budget drops whole turns from the end, never the first.
    const first = transcriptSequences(text, t, 1);
    expect(first).toHaveLength(1);
    expect(first[0]?.targets.length).toBe(text.actionChoices([t.turns[0]?.reply ?? ''])[0]?.length);
  });

  it('start a new sequence at every turn when the context keeps no past turns (context.history: 0)', () => {
    const t = transcripts.find((x) => x.turns.length >= 3);
    if (t === undefined) throw new Error('no long transcript');
    const memoryless = chatText({ tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig, generationConfig: files.generationConfig }, { ...chat, history: 0 });
    const sequences = transcriptSequences(memoryless, t, 4096);
    expect(sequences).toHaveLength(t.turns.length);
    sequences.forEach((s, k) => {
      const turn = t.turns[k];
      if (turn === undefined) throw new Error('missing turn');
      const context = memoryless.context({ instruction: t.instruction, pastTurns: [], observationText: turn.observationText });
      const reply = memoryless.actionChoices([turn.reply])[0] as Int32Array;
      expect([...s.ids]).toEqual([...context, ...reply]);
      expect([...s.targets].map((p) => s.ids[p + 1])).toEqual([...reply]);
    });
  });
});

describe('next-token training', () => {
  it('builds padded batches whose targets are the next tokens', () => {
    const batch = nextTokenBatch([
      { ids: Int32Array.of(5, 6, 7), targets: Int32Array.of(1) },
      { ids: Int32Array.of(8, 9), targets: Int32Array.of(0) },
    ]);
    expect(batch.seqLen).toBe(3);
    expect([...batch.targetPositions]).toEqual([1, 3]);
    expect([...batch.targetIds]).toEqual([7, 9]);
    expect([...batch.attentionMask]).toEqual([1, 1, 1, 1, 1, 0]);
    expect(() => nextTokenBatch([{ ids: Int32Array.of(1, 2), targets: Int32Array.of(1) }])).toThrow(/targets/);
  });

  it('lowers the loss of the reply tokens, the same way for the same seed', () => {
    const seqs = transcripts.slice(0, 6).flatMap((t) => transcriptSequences(text, t, 1024));
    const shape = { architecture: 'llama' as const, vocabSize: text.vocabSize, dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64, maxContext: 1024, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true };
    const run = () => {
      const model = new TransformerModel(shape, Rng.fromSeed(3));
      try {
        return trainNextToken(model, seqs, { epochs: 4, batchTokens: 2048, lr: 1e-2 }, Rng.fromSeed(4));
      } finally {
        model.dispose();
      }
    };
    const losses = run();
    expect(losses).toHaveLength(4);
    expect(losses.at(-1)).toBeLessThan((losses[0] as number) * 0.7);
    expect(run()).toEqual(losses);
  });
});
