/**
 * The tool-calling stand-in's parts: random valid calls of declared tools, its ChatML template with
 * tools (the same as plain ChatML without them), and transcript sequences laid out as tool contexts.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { checkToolCall, parseToolCallText, type ToolSpec } from '../../../src/core/tools.js';
import { ChatTemplate, templateTools } from '../../../src/models/chat/template.js';
import { chatText } from '../../../src/models/policy-text.js';
import { CHATML_TEMPLATE, CHATML_TOOLS_TEMPLATE, chatmlFiles } from '../../../scripts/standin/chatml-files.js';
import { randomToolCall, randomToolTranscripts, transcriptSequences } from '../../../scripts/standin/transcripts.js';
import { trainBpe } from '../../../src/models/tokenizer/train.js';
import { VAULT_TOOLS, vaultSpec } from '../../helpers/vault-env.js';

const tools: ToolSpec[] = [
  { name: 'pick', description: '', parameters: { type: 'object', properties: { color: { type: 'string', enum: ['red', 'blue'] }, n: { type: 'integer' }, loud: { type: 'boolean' }, note: { type: 'string' } }, required: ['color', 'n', 'loud', 'note'] } },
  { name: 'wait', description: '', parameters: { type: 'object', properties: {} } },
];

describe('random valid calls', () => {
  it('draw a declared tool and arguments the declaration accepts (enum values, typed values, listed actions for free strings)', () => {
    const rng = Rng.fromSeed(3);
    const calls = Array.from({ length: 200 }, () => randomToolCall(rng, tools, { text: '', availableActions: ['up', 'down'] }));
    for (const call of calls) expect(checkToolCall(call, tools)).toBeNull();
    const picks = calls.filter((c) => c.name === 'pick');
    expect(new Set(picks.map((c) => c.arguments.color))).toEqual(new Set(['red', 'blue']));
    expect(new Set(picks.map((c) => c.arguments.note))).toEqual(new Set(['up', 'down']));
    expect(picks.length).toBeGreaterThan(60);
    expect(picks.length).toBeLessThan(140);
    // Enum values the observation lists are the ones drawn (a listed mode's random player).
    const listed = Array.from({ length: 50 }, () => randomToolCall(rng, [tools[0] as ToolSpec], { text: '', availableActions: ['blue', 'up'] }));
    expect(new Set(listed.map((c) => c.arguments.color))).toEqual(new Set(['blue']));
  });

  it('play episodes through the tools, sending each call as its canonical text, deterministically', () => {
    const steps: string[] = [];
    const spec = vaultSpec(steps);
    const play = (seed: number) => randomToolTranscripts(spec.create(), [0, 1, 2, 3, 4, 5], { episodes: 6, turns: 3 }, Rng.fromSeed(seed));
    const transcripts = play(1);
    expect(play(1)).toEqual(transcripts);
    for (const t of transcripts) {
      for (const turn of t.turns) {
        const parsed = parseToolCallText(turn.reply);
        expect(parsed.ok && parsed.call).toEqual(turn.call);
        expect(turn.call && checkToolCall(turn.call, VAULT_TOOLS)).toBeNull();
      }
    }
    expect(steps.slice(0, transcripts[0]?.turns.length)).toEqual(transcripts[0]?.turns.map((t) => t.reply));
  });
});

describe('the stand-in template with tools', () => {
  const messages = [
    { role: 'user', content: 'Go.' },
    { role: 'assistant', content: 'OK.' },
    { role: 'user', content: 'A wall.' },
  ];

  it('renders plain conversations exactly as plain ChatML', () => {
    const plain = new ChatTemplate(CHATML_TEMPLATE);
    const withTools = new ChatTemplate(CHATML_TOOLS_TEMPLATE);
    expect(withTools.render(messages, { addGenerationPrompt: true })).toBe(plain.render(messages, { addGenerationPrompt: true }));
  });

  it('lists the tools in a system message and writes calls and results in the hermes format', () => {
    const rendered = new ChatTemplate(CHATML_TOOLS_TEMPLATE).render(
      [
        { role: 'system', content: 'Be brief.' },
        ...messages,
        { role: 'assistant', content: '', tool_calls: [{ id: 'call00000', type: 'function', function: { name: 'wait', arguments: {} } }] },
        { role: 'tool', content: 'Nothing happens.', tool_call_id: 'call00000' },
      ],
      { addGenerationPrompt: true, tools: templateTools(tools) },
    );
    expect(rendered.startsWith('<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions')).toBe(true);
    expect(rendered).toContain('<tools>\n{"type": "function", "function": {"name": "pick"');
    expect(rendered.endsWith('<|im_start|>assistant\n<tool_call>\n{"name": "wait", "arguments": {}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nNothing happens.\n</tool_response><|im_end|>\n<|im_start|>assistant\n')).toBe(true);
  });

  it('makes transcript sequences whose targets are the canonical call ids, in tool contexts', () => {
    const spec = vaultSpec();
    const transcripts = randomToolTranscripts(spec.create(), [3, 4], { episodes: 2, turns: 3 }, Rng.fromSeed(2));
    const corpus = ['system\n', 'user\n', 'assistant\n', CHATML_TOOLS_TEMPLATE, ...transcripts.flatMap((t) => t.turns.flatMap((u) => [u.observationText, u.reply]))];
    const files = chatmlFiles(trainBpe(corpus, { vocabSize: 400 }), { modelMaxLength: 2048, maxNewTokens: 48, tools: true });
    const text = chatText(files, { system: null, acknowledge: 'OK.', history: 'full', maxContext: 2048, maxResponseTokens: 4096 });
    const toolText = text.toolText(VAULT_TOOLS);
    if (!toolText.ok) throw new Error(toolText.reason);
    const t = transcripts[0];
    if (t === undefined) throw new Error('no transcript');
    const [sequence] = transcriptSequences(text, t, 2048, toolText.text);
    if (sequence === undefined) throw new Error('no sequence');
    const replies = t.turns.map((turn, k) => toolText.text.encodeCall(turn.call ?? { name: '', arguments: {} }, k));
    expect(sequence.targets.length).toBe(replies.reduce((n, r) => n + r.length, 0));
    const targetIds = [...sequence.targets].map((p) => sequence.ids[p + 1]);
    expect(targetIds).toEqual(replies.flatMap((r) => [...r]));
    // Each reply reads back as its call.
    for (const [k, r] of replies.entries()) expect(toolText.text.reply(r)).toEqual({ kind: 'calls', content: '', calls: [t.turns[k]?.call] });
  });
});
