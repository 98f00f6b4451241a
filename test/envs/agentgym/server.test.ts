/**
 * `turnwise env serve` answers bad input as AgentGym's FastAPI servers do and stays up: 422
 * `{"detail": [...]}` for invalid JSON and missing/mistyped fields, 200 `{"error"}` for
 * application errors, 413 for huge bodies, 503 past the session cap, idle expiry on a simulated clock.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { babyaiSpec } from '../../../src/envs/babyai/index.js';
import { createAgentGymApp } from '../../../src/envs/agentgym/server/app.js';

function makeApp(overrides: Partial<Parameters<typeof createAgentGymApp>[0]> = {}) {
  return createAgentGymApp({ spec: babyaiSpec, maxSessions: 4, idleMs: 1000, maxBodyBytes: 1024, cors: false, clock: new SimulatedClock(), ...overrides });
}
const json = (body: string, type = 'application/json') => ({ method: 'POST', headers: { 'content-type': type }, body });

describe('turnwise env serve: validation and errors', () => {
  it('answers missing and mistyped fields with FastAPI 422 detail entries', async () => {
    const { app, close } = makeApp();
    const res = await app.request('/step', json('{"id": "x"}'));
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [
        { type: 'int_parsing', loc: ['body', 'id'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
        { type: 'missing', loc: ['body', 'action'], msg: 'Field required', input: { id: 'x' } },
      ],
    });
    const floaty = await app.request('/reset', json('{"id": 1.5, "data_idx": 2}'));
    expect(((await floaty.json()) as { detail: { type: string }[] }).detail[0]?.type).toBe('int_from_float');
    const action = await app.request('/step', json('{"id": 0, "action": 5}'));
    expect(((await action.json()) as { detail: unknown[] }).detail).toEqual([{ type: 'string_type', loc: ['body', 'action'], msg: 'Input should be a valid string', input: 5 }]);
    await close();
  });

  it('answers invalid JSON, a non-object body, a missing body and a non-JSON content-type with 422', async () => {
    const { app, close } = makeApp();
    const bad = await app.request('/reset', json('{"id": 0,'));
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { type: string; loc: unknown[] }[] }).detail[0]).toMatchObject({ type: 'json_invalid', msg: 'JSON decode error' });
    expect(await (await app.request('/reset', json('[1, 2]'))).json()).toEqual({
      detail: [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: [1, 2] }],
    });
    expect(await (await app.request('/close', { method: 'POST' })).json()).toEqual({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] });
    const text = await app.request('/close', json('{"id": 0}', 'text/plain'));
    expect(text.status).toBe(422);
    const query = await app.request('/observation?id=abc');
    expect(await query.json()).toEqual({ detail: [{ type: 'int_parsing', loc: ['query', 'id'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' }] });
    await close();
  });

  it('answers application errors with HTTP 200 {"error"} and keeps serving other sessions', async () => {
    const { app, close } = makeApp();
    expect(await (await app.request('/create', { method: 'POST' })).json()).toEqual({ id: 0 });
    const unknown = await app.request('/step', json('{"id": 7, "action": "turn left"}'));
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual({ error: 'unknown instance id 7 (never created, or closed)' });
    expect(await (await app.request('/step', json('{"id": 0, "action": "turn left"}'))).json()).toEqual({ error: 'instance 0 has no episode yet; call /reset first' });
    expect(await (await app.request('/reset', json('{"id": 0, "data_idx": -1}'))).json()).toEqual({ error: 'task index must be non-negative, got -1' });
    const reset = (await (await app.request('/reset', json('{"id": 0, "data_idx": 1}'))).json()) as Record<string, unknown>;
    expect(Object.keys(reset)).toEqual(['observation', 'reward', 'score', 'deleted', 'done']);
    const step = (await (await app.request('/step', json('{"id": 0, "action": "turn left"}'))).json()) as Record<string, unknown>;
    expect(Object.keys(step)).toEqual(['observation', 'reward', 'score', 'done']);
    expect(await (await app.request('/close', json('{"id": 0}'))).json()).toBe(true);
    expect(await (await app.request('/close', json('{"id": 0}'))).json()).toBe(false);
    await close();
  });

  it('refuses a huge body with 413 before reading it', async () => {
    const { app, close } = makeApp();
    const res = await app.request('/step', json(JSON.stringify({ id: 0, action: 'x'.repeat(5000) })));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { detail: string }).detail).toContain('1024 bytes');
    await close();
  });

  it('caps live sessions (503 with {"error"}) and frees a slot on close', async () => {
    const { app, close } = makeApp({ maxSessions: 2 });
    await app.request('/create', { method: 'POST' });
    await app.request('/create', { method: 'POST' });
    const full = await app.request('/create', { method: 'POST' });
    expect(full.status).toBe(503);
    expect(((await full.json()) as { error: string }).error).toContain('cap 2');
    await app.request('/close', json('{"id": 0}'));
    expect(await (await app.request('/create', { method: 'POST' })).json()).toEqual({ id: 2 });
    await close();
  });

  it('expires idle sessions on the injected clock and says so', async () => {
    const clock = new SimulatedClock();
    const { app, sessions, close } = makeApp({ clock, idleMs: 1000 });
    await app.request('/create', { method: 'POST' });
    await app.request('/create', { method: 'POST' });
    clock.advance(600);
    await app.request('/reset', json('{"id": 1, "data_idx": 1}')); // touches session 1 only
    clock.advance(500);
    await sessions.sweep();
    expect(sessions.ids).toEqual([1]);
    expect(await (await app.request('/step', json('{"id": 0, "action": "turn left"}'))).json()).toEqual({
      error: 'instance 0 expired after 1000 ms without requests; create a new one',
    });
    await close();
  });

  it('adds CORS headers only when asked', async () => {
    const off = makeApp();
    expect((await off.app.request('/', { headers: { origin: 'http://ui.local' } })).headers.get('access-control-allow-origin')).toBeNull();
    const on = makeApp({ cors: true });
    expect((await on.app.request('/', { headers: { origin: 'http://ui.local' } })).headers.get('access-control-allow-origin')).toBe('http://ui.local');
    await off.close();
    await on.close();
  });
});
