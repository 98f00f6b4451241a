import { readFileSync } from 'node:fs';
import { decompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import type { EngineSampleResult } from '../../../src/engines/engine.js';
import { decodeForwardBackwardOutput, decodeForwardBackwardRequest, decodeSampleResponse, encodeForwardBackwardOutput, encodeForwardBackwardRequest, encodeSampleResponse } from '../../../src/engines/tinker/proto/codec.js';
import { datumFromWire } from '../../../src/engines/tinker/wire.js';

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../../fixtures/tinker-sdk/${name}`, import.meta.url)));

describe('the SDK’s protobuf bodies', () => {
  it('decodes a forward_backward body the official SDK wrote, zstd-compressed or not', () => {
    const raw = fixture('forward-backward.pb');
    expect(decompress(fixture('forward-backward.pb.zst'))).toEqual(raw);
    const { request, forwardOnly } = decodeForwardBackwardRequest(raw);
    expect(forwardOnly).toBe(true);
    expect(request.model_id).toBe('model_00000001');
    expect(request.seq_id).toBe(7);
    expect(request.forward_backward_input.loss_fn).toBe('ppo');
    expect(request.forward_backward_input.loss_fn_config).toEqual({ clip_low_threshold: 0.9, clip_high_threshold: 1.1 });
    const [a, b] = request.forward_backward_input.data.map((d, i) => datumFromWire(d, `data[${i}]`));
    expect(Array.from(a!.inputTokens)).toEqual([1, 354, 201, 409]);
    expect(Array.from(a!.targetTokens)).toEqual([354, 201, 409, 331]);
    expect(Array.from(a!.weights)).toEqual([0, 1, 1, 1]);
    expect(Array.from(a!.samplingLogprobs!)).toEqual([-1.5, -2.25, -3, -0.5]);
    expect(Array.from(a!.advantages!)).toEqual([1, -1, 0.5, 2]);
    expect(Array.from(b!.inputTokens)).toEqual([1, 2, 3]);
    expect(Array.from(b!.weights)).toEqual([1, 1, 1]);
    expect(Array.from(b!.advantages!)).toEqual([0, 1, -2]);
    // what turnwise encodes decodes to the same request
    expect(decodeForwardBackwardRequest(encodeForwardBackwardRequest(request, true))).toEqual({ request, forwardOnly: true });
  });

  it('refuses bytes that are not a ForwardBackwardRequest, naming the body', () => {
    expect(() => decodeForwardBackwardRequest(Uint8Array.of(0xff, 0xff, 0xff))).toThrow(/'body'/);
  });

  it('round-trips forward outputs and sampling results (prompt logprobs NaN first, absent stays absent)', () => {
    const out = { loss_fn_output_type: 'scalar', loss_fn_outputs: [1, 3].map((n) => ({ logprobs: { data: Array.from({ length: n }, (_, i) => -i - 0.5), dtype: 'float32' as const, shape: [n] }, elementwise_loss: { data: Array(n).fill(0.25), dtype: 'float32' as const, shape: [n] } })), metrics: { 'loss:sum': 1 } };
    expect(decodeForwardBackwardOutput(encodeForwardBackwardOutput(out))).toEqual(out);
    const result: EngineSampleResult = { sequences: [{ tokens: Int32Array.of(5, 2), logprobs: Float32Array.of(-1, -2), stopReason: 'stop' }], promptLogprobs: Float32Array.of(Number.NaN, -0.5) };
    const back = decodeSampleResponse(encodeSampleResponse(result));
    expect(Array.from(back.sequences[0]!.tokens)).toEqual([5, 2]);
    expect(back.sequences[0]!.stopReason).toBe('stop');
    expect(Number.isNaN(back.promptLogprobs![0]!)).toBe(true);
    expect(decodeSampleResponse(encodeSampleResponse({ ...result, promptLogprobs: null })).promptLogprobs).toBeNull();
  });
});
