import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  classifyFutureAnswer,
  createModelRequest,
  createSessionRequest,
  datumFromWire,
  datumToWire,
  forwardBackwardOutput,
  forwardBackwardRequest,
  forwardOutputFromWire,
  forwardRequest,
  optimStepRequest,
  parseTinkerPath,
  sampleRequest,
  sampleRequestFromWire,
  sampleResponse,
  sampleResultFromWire,
  sampleResultToWire,
  saveWeightsForSamplerRequest,
  tinkerPath,
  trainingRun,
} from '../../../src/engines/tinker/wire.js';

interface Exchange {
  method: string;
  path: string;
  request_body: unknown;
  status: number;
  response_body: unknown;
}
const transcript: Exchange[] = readFileSync(new URL('../../fixtures/tinker-skyrl/transcript.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line));
const at = (line: number) => transcript[line - 1] as Exchange;

describe('Tinker wire schemas', () => {
  it('accept every recorded request body the server accepted and refuse the ones it refused with a 422', () => {
    const schemas: Record<string, { safeParse(v: unknown): { success: boolean } }> = {
      '/api/v1/create_session': createSessionRequest,
      '/api/v1/create_model': createModelRequest,
      '/api/v1/forward': forwardRequest,
      '/api/v1/forward_backward': forwardBackwardRequest,
      '/api/v1/optim_step': optimStepRequest,
      '/api/v1/save_weights_for_sampler': saveWeightsForSamplerRequest,
      '/api/v1/asample': sampleRequest,
    };
    let checked = 0;
    for (const e of transcript) {
      const schema = schemas[e.path];
      if (schema === undefined) continue;
      // 422s are the server refusing a body at validation: the schema must refuse them too
      expect(schema.safeParse(e.request_body).success, `${e.path} ${JSON.stringify(e.request_body).slice(0, 80)}`).toBe(e.status !== 422);
      checked++;
    }
    expect(checked).toBe(37);
  });

  it('parse the recorded results and training runs', () => {
    expect(forwardBackwardOutput.safeParse(at(14).response_body).success).toBe(true);
    expect(sampleResponse.safeParse(at(36).response_body).success).toBe(true);
    expect(trainingRun.safeParse(at(9).response_body).success).toBe(true);
  });

  it('turn a recorded forward request into engine data and back', () => {
    const body = forwardBackwardRequest.parse(at(22).request_body);
    const first = body.forward_backward_input.data[0]!;
    const d = datumFromWire(first, 'data[0]');
    expect(d.inputTokens.length).toBe(24);
    expect(d.weights[0]).toBe(0);
    expect(d.advantages?.[2]).toBe(0.5);
    const back = datumToWire(d);
    expect(back.loss_fn_inputs.target_tokens?.data).toEqual(first.loss_fn_inputs.target_tokens?.data);
    expect(Array.from(datumFromWire(back, 'again').samplingLogprobs ?? [])).toEqual(Array.from(d.samplingLogprobs ?? []));
  });

  it('default weights to 1 and refuse a target list of another length, naming the field', () => {
    const lone = forwardRequest.parse(at(52).request_body).forward_input.data[0]!;
    expect(Array.from(datumFromWire(lone, 'd').weights).every((w) => w === 1)).toBe(true);
    const short = forwardBackwardRequest.parse(at(67).request_body).forward_backward_input.data[0]!;
    expect(() => datumFromWire(short, 'forward_backward_input.data[0]')).toThrow(/forward_backward_input\.data\[0\]\.loss_fn_inputs\.target_tokens.*23 values.*24 tokens/);
  });

  it('expand a sparse CSR tensor as the SDK sends 2-D weights', () => {
    const d = datumFromWire(
      {
        model_input: { chunks: [{ type: 'encoded_text', tokens: [1, 2, 3, 4] }] },
        loss_fn_inputs: {
          target_tokens: { data: [2, 3, 4, 5], dtype: 'int64', shape: [4] },
          weights: { data: [1, 0.5], dtype: 'float32', shape: [2, 2], sparse_crow_indices: [0, 1, 2], sparse_col_indices: [1, 0] },
        },
      },
      'd',
    );
    expect(Array.from(d.weights)).toEqual([0, 1, 0.5, 0]);
  });

  it('read the forward output of the recorded server', () => {
    const out = forwardOutputFromWire(forwardBackwardOutput.parse(at(14).response_body));
    expect(out.logprobs).toHaveLength(3);
    expect(out.logprobs[0]![0]).toBeCloseTo(-5.74935, 5);
  });

  it('read prompt logprobs in both layouts as [promptLen] with NaN first', () => {
    const recorded = sampleResultFromWire(sampleResponse.parse(at(36).response_body), 16);
    expect(recorded.promptLogprobs).toHaveLength(16);
    expect(Number.isNaN(recorded.promptLogprobs![0]!)).toBe(true);
    const again = sampleResultFromWire(sampleResultToWire(recorded, 'leading-null'), 16);
    expect(Array.from(again.promptLogprobs!.slice(1))).toEqual(Array.from(recorded.promptLogprobs!.slice(1)));
    expect(sampleResultToWire(recorded, 'drop-first').prompt_logprobs).toHaveLength(15);
  });

  it('require max_tokens and refuse stop strings by name', () => {
    expect(() => sampleRequestFromWire(sampleRequest.parse(at(74).request_body), 'body')).toThrow(/body\.sampling_params\.max_tokens/);
    const req = sampleRequest.parse({ ...(at(45).request_body as object), sampling_params: { max_tokens: 4, stop: ['\n'] } });
    expect(() => sampleRequestFromWire(req, 'body')).toThrow(/body\.sampling_params\.stop/);
    expect(sampleRequestFromWire(sampleRequest.parse(at(45).request_body), 'b').stopTokenIds).toEqual([2, 197]);
  });

  it('classify every answer retrieve_future gave', () => {
    expect(classifyFutureAnswer(at(14).status, at(14).response_body).kind).toBe('result');
    expect(classifyFutureAnswer(at(61).status, at(61).response_body)).toEqual({ kind: 'failed', message: 'LoRA rank 16 must be between 1 and 8', category: 'user' });
    expect(classifyFutureAnswer(at(77).status, at(77).response_body).kind).toBe('timeout');
    expect(classifyFutureAnswer(at(55).status, at(55).response_body).kind).toBe('not_found');
    expect(classifyFutureAnswer(200, { error: 'boom', category: 'server' })).toEqual({ kind: 'failed', message: 'boom', category: 'server' });
    expect(classifyFutureAnswer(200, { type: 'try_again', request_id: '3', queue_state: 'active' })).toEqual({ kind: 'try_again', queueState: 'active' });
    expect(classifyFutureAnswer(410, { detail: 'gone' }).kind).toBe('gone');
  });

  it('parse tinker paths in the long and the short form', () => {
    expect(parseTinkerPath('tinker://model_1/final')).toEqual({ modelId: 'model_1', kind: 'sampler', name: 'final' });
    const p = parseTinkerPath('tinker://model_1/weights/step-3');
    expect(p).toEqual({ modelId: 'model_1', kind: 'training', name: 'step-3' });
    expect(tinkerPath(p!)).toBe('tinker://model_1/weights/step-3');
    expect(parseTinkerPath('tinker://model_1/other/x')).toBeNull();
    expect(parseTinkerPath('s3://x')).toBeNull();
  });
});
