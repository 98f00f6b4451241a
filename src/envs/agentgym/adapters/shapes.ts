/**
 * Small readers for answer shapes. They throw `Error` with a message naming the key and what was
 * there; the environment wraps it in an `AgentGymProtocolError` naming the URL and path.
 */
import { isRecord } from '../http-client.js';

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/** The object itself, or a throw. */
export function objectOf(body: unknown, what: string): Record<string, unknown> {
  if (!isRecord(body)) throw new Error(`expected a JSON object for ${what}, got ${show(body)}`);
  return body;
}

/** `body[key]` as a string. */
export function stringAt(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string') throw new Error(`expected a string at "${key}", got ${show(value)}`);
  return value;
}

/** `body[key]` as a finite number (booleans count as 0/1, as Python's do). */
export function numberAt(body: Record<string, unknown>, key: string): number {
  const value = body[key];
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`expected a number at "${key}", got ${show(value)}`);
  return value;
}

/** `body[key]` as a boolean. */
export function booleanAt(body: Record<string, unknown>, key: string): boolean {
  const value = body[key];
  if (typeof value !== 'boolean') throw new Error(`expected a boolean at "${key}", got ${show(value)}`);
  return value;
}

/** `body[key]` as an integer id. */
export function intAt(body: Record<string, unknown>, key: string): number {
  const value = body[key];
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error(`expected an integer at "${key}", got ${show(value)}`);
  return value;
}

/** A bare integer answer (`/create` of WebShop, SearchQA, SQLGym, tool envs). */
export function bareInt(body: unknown, what: string): number {
  if (typeof body !== 'number' || !Number.isInteger(body)) throw new Error(`expected a bare integer for ${what}, got ${show(body)}`);
  return body;
}

/** A bare string answer (`/reset` of SearchQA and tool envs, `GET /observation` of most `env_idx` servers). */
export function bareString(body: unknown, what: string): string {
  if (typeof body !== 'string') throw new Error(`expected a bare string for ${what}, got ${show(body)}`);
  return body;
}

/** `[observation, null]` (`/reset` of WebShop and SQLGym). */
export function observationPair(body: unknown, what: string): string {
  if (!Array.isArray(body) || body.length !== 2 || typeof body[0] !== 'string') throw new Error(`expected [observation, null] for ${what}, got ${show(body)}`);
  return body[0];
}

/** `body[key]` as an array of strings. */
export function stringsAt(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error(`expected an array of strings at "${key}", got ${show(value)}`);
  return value as string[];
}
