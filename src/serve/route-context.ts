/**
 * What the routes of the server share (route files import this, not app.ts, which imports them).
 */
import type { GenerationBatcher } from './batcher.js';
import type { ServedModel } from './served-model.js';

/** The limits every route reads. */
export interface ServeLimits {
  readonly maxMessages: number;
  readonly maxPrompts: number;
  readonly maxChoices: number;
  readonly guided: { readonly maxEntries: number; readonly maxBytes: number };
}

/** What a route needs: the model, the batcher in front of it, limits, ids and clocks. */
export interface RouteContext {
  readonly model: ServedModel;
  readonly batcher: GenerationBatcher;
  readonly limits: ServeLimits;
  /** Unix seconds for `created`. */
  created(): number;
  /** A fresh id suffix. */
  nextId(): number;
  /** `system_fingerprint`: the weights version. */
  fingerprint(): string;
  /** The request's JSON body (read in full; a body that is not JSON is a 400). */
  readJson(c: { req: { text(): Promise<string> }; set(key: 'bodyRead', value: boolean): void }): Promise<unknown>;
  /** {@link readJson}, with the body's text (to parse again where JSON's floats must stay floats). */
  readJsonWithText(c: { req: { text(): Promise<string> }; set(key: 'bodyRead', value: boolean): void }): Promise<{ readonly value: unknown; readonly text: string }>;
  /** Refuses a `model` other than the served one (404 model_not_found); a missing one means it. */
  checkModel(requested: string | null | undefined): void;
}

/** Hono's per-request variables here. */
export type ServeEnv = { Variables: { bodyRead: boolean } };
