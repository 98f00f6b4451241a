import { describe, expect, it } from 'vitest';
import { decodeOps, decodeReplies, type EnvReply, encodeOps, encodeReplies, OP, STATUS } from '../../src/runtime/env-pool/batch-codec.js';
import { EnvShard } from '../../src/runtime/env-pool/env-shard.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';

const reply = (over: Partial<EnvReply>): EnvReply => ({ status: STATUS.ok, text: '', actions: null, reward: 0, done: false, success: undefined, infoJson: '', error: '', ...over });

describe('env worker batch codec', () => {
  it('round-trips a batch of ops, including non-ASCII action text, in one buffer', () => {
    const ops = [
      { kind: OP.reset, slot: 0, taskIndex: 1040, text: '' },
      { kind: OP.step, slot: 7, taskIndex: 0, text: 'Thought: ünïcødé → 🟥\nAction: turn left' },
      { kind: OP.close, slot: 3, taskIndex: 0, text: '' },
    ];
    const buffer = encodeOps(ops);
    expect(buffer).toBeInstanceOf(ArrayBuffer);
    expect(decodeOps(buffer)).toEqual(ops);
  });

  it('round-trips replies: actions or none, success true/false/unknown, info, errors', () => {
    const replies = [
      reply({ text: 'You see a red ball 🟥', actions: ['turn left', 'go to red ball 1', ''], reward: 0.5, done: true, success: true, infoJson: '{"invalid":false}' }),
      reply({ text: 'a wall', actions: [], success: false }),
      reply({ text: 'no list' }),
      reply({ status: STATUS.error, error: 'step before reset' }),
    ];
    expect(decodeReplies(encodeReplies(replies))).toEqual(replies);
  });

  it('round-trips actions repeated within and across replies, in order, ASCII or not', () => {
    const replies = [
      reply({ text: 'first', actions: ['turn left', 'turn right', 'turn left', 'go to ünïcødé 1'] }),
      reply({ text: 'second', actions: ['go to ünïcødé 1', 'turn left'] }),
      reply({ text: 'third', actions: [] }),
      reply({ text: 'fourth', actions: ['move forward', 'turn right', 'turn right'] }),
    ];
    const decoded = decodeReplies(encodeReplies(replies));
    expect(decoded).toEqual(replies);
    // Duplicates inside one reply stay where they were (each distinct action travels once).
    const shared = decoded.map((r) => r.actions?.indexOf('turn right'));
    expect(shared).toEqual([1, -1, -1, 1]);
    // The header's third u32 counts text bytes: the texts plus each distinct action once.
    const textBytes = new Uint32Array(encodeReplies(replies), 0, 3)[2];
    const distinct = ['turn left', 'turn right', 'go to ünïcødé 1', 'move forward'];
    const utf8 = (s: string) => new TextEncoder().encode(s).length;
    expect(textBytes).toBe([...replies.map((r) => r.text), ...distinct].reduce((n, s) => n + utf8(s), 0));
  });

  it('an ASCII batch and a non-ASCII batch decode the same text their senders wrote', () => {
    const ascii = [reply({ text: 'You see a wall 2 steps forward', actions: ['turn left'] })];
    const wide = [reply({ text: 'ünïcødé → 🟥 a lone surrogate \ud800 after', actions: ['☃'] })];
    expect(decodeReplies(encodeReplies(ascii))).toEqual(ascii);
    // A lone surrogate is not UTF-8: it arrives as U+FFFD, as TextEncoder writes it.
    expect(decodeReplies(encodeReplies(wide))[0]?.text).toBe('ünïcødé → 🟥 a lone surrogate \ufffd after');
  });

  it('an empty batch round-trips', () => {
    expect(decodeOps(encodeOps([]))).toEqual([]);
    expect(decodeReplies(encodeReplies([]))).toEqual([]);
  });
});

describe('EnvShard', () => {
  it('answers each op in order and fails only the op whose slot was never reset', async () => {
    const spec = getEnvironmentSpec('babyai');
    const settings = { levels: ['GoToRedBall'] };
    const shard = new EnvShard(spec, settings);
    const direct = spec.create({ settings });
    const first = await direct.reset(1041);
    const [r0, bad, r1] = await shard.apply([
      { kind: OP.reset, slot: 4, taskIndex: 1041, text: '' },
      { kind: OP.step, slot: 9, taskIndex: 0, text: 'turn left' },
      { kind: OP.step, slot: 4, taskIndex: 0, text: 'turn left' },
    ]);
    expect(r0?.text).toBe(first.text);
    expect(r0?.actions).toEqual(first.availableActions);
    expect(bad?.status).toBe(STATUS.error);
    expect(bad?.error).toMatch(/slot 9: step before reset/);
    const stepped = await direct.step('turn left');
    expect(r1?.text).toBe(stepped.observation.text);
    expect(r1?.done).toBe(stepped.done);
    expect(shard.size).toBe(1);
    await shard.apply([{ kind: OP.close, slot: 4, taskIndex: 0, text: '' }]);
    expect(shard.size).toBe(0);
  });
});
