import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { Admission } from '../../src/serve/admission.js';

/** A route whose answers the test releases one by one (a model that is busy until told). */
function gatedApp(maxQueue: number) {
  const admission = new Admission({ maxQueue });
  const gates: (() => void)[] = [];
  const app = new Hono();
  app.post('/v1/completions', admission.middleware());
  app.post('/v1/completions', async (c) => {
    await new Promise<void>((resolve) => gates.push(resolve));
    return c.json({ ok: true });
  });
  app.post('/v1/stream', admission.middleware());
  app.post('/v1/stream', (c) =>
    streamSSE(c, async (stream) => {
      await stream.writeSSE({ data: 'one' });
      await new Promise<void>((resolve) => gates.push(resolve));
      await stream.writeSSE({ data: '[DONE]' });
    }),
  );
  /** Resolves once `n` requests wait at the gate. */
  const waiting = async (n: number) => {
    while (gates.length < n) await new Promise((r) => setImmediate(r));
  };
  return { admission, app, gates, waiting };
}

describe('admission control', () => {
  it('answers the request past the limit 429 with Retry-After and an OpenAI rate-limit body, and admits again once one finished', async () => {
    const { admission, app, gates, waiting } = gatedApp(2);
    const first = app.request('/v1/completions', { method: 'POST' });
    const second = app.request('/v1/completions', { method: 'POST' });
    await waiting(2);
    expect(admission.queueDepth).toBe(2);
    const refused = await app.request('/v1/completions', { method: 'POST' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toEqual({ error: { message: expect.stringMatching(/at capacity: 2 requests .*limit 2/), type: 'requests', param: null, code: 'rate_limit_exceeded' } });
    gates.shift()?.();
    expect((await first).status).toBe(200);
    expect(admission.queueDepth).toBe(1);
    const third = app.request('/v1/completions', { method: 'POST' });
    await waiting(2);
    for (const open of gates.splice(0)) open();
    expect([(await second).status, (await third).status]).toEqual([200, 200]);
    expect(admission.queueDepth).toBe(0);
    expect(admission.metricsText()).toMatch(/turnwise_serve_queue_depth 0\n[\s\S]*turnwise_serve_queue_limit 2\n[\s\S]*turnwise_serve_requests_admitted_total 3\n[\s\S]*turnwise_serve_requests_rejected_total 1\n/);
  });

  it('keeps a streamed answer in the queue until its stream ends', async () => {
    const { admission, app, gates, waiting } = gatedApp(1);
    const response = await app.request('/v1/stream', { method: 'POST' });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the first event is out: the handler has returned, the stream goes on
    await waiting(1);
    expect(admission.queueDepth).toBe(1);
    expect((await app.request('/v1/completions', { method: 'POST' })).status).toBe(429);
    gates.shift()?.();
    while (!(await reader.read()).done);
    expect(admission.queueDepth).toBe(0);
  });

  it('frees the slot of a streamed answer whose client went away', async () => {
    const { admission, app, waiting } = gatedApp(1);
    const response = await app.request('/v1/stream', { method: 'POST' });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await waiting(1);
    await reader.cancel('client closed the connection');
    expect(admission.queueDepth).toBe(0);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new Admission({ maxQueue: 0 })).toThrow(/maxQueue must be a positive integer, got 0/);
  });
});
