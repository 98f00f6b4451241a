/**
 * The HTTP edge of the Tinker server: reading bodies (JSON, or the SDK's protobuf, either
 * optionally zstd-compressed: `Content-Encoding: zstd`, decompressed with fzstd, a pure-JS
 * decoder with no native build or install-time download) and answering errors in the shapes the
 * protocol uses — FastAPI's 422 `{detail: [{type, loc, msg, input}]}` for a body that does not
 * validate, `{detail}` with 400/404/409 otherwise.
 */
import { decompress } from 'fzstd';
import type { Context } from 'hono';
import type { z } from 'zod';
import { PROTOBUF_CONTENT_TYPE } from '../../engines/tinker/wire.js';

/** An error answered with `status` and `{detail}` (or a 422's issue list). */
export class TinkerHttpError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 410 | 413 | 415 | 422 | 500,
    readonly detail: string | readonly Record<string, unknown>[],
  ) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
    this.name = 'TinkerHttpError';
  }
}

/** A request body: parsed JSON, or protobuf bytes. */
export type RequestBody = { readonly kind: 'json'; readonly value: unknown } | { readonly kind: 'protobuf'; readonly bytes: Uint8Array };

/**
 * Reads the body (at most `maxBytes` after decompression).
 * @example const body = await readBody(c, 64 << 20);
 */
export async function readBody(c: Context, maxBytes: number): Promise<RequestBody> {
  let bytes: Uint8Array = new Uint8Array(await c.req.arrayBuffer());
  const encoding = (c.req.header('content-encoding') ?? '').trim().toLowerCase();
  if (encoding === 'zstd') {
    try {
      bytes = decompress(bytes);
    } catch (err) {
      throw new TinkerHttpError(400, `body is not valid zstd: ${(err as Error).message}`);
    }
  } else if (encoding !== '' && encoding !== 'identity') throw new TinkerHttpError(415, `unsupported Content-Encoding '${encoding}' (zstd or none)`);
  if (bytes.length > maxBytes) throw new TinkerHttpError(413, `body of ${bytes.length} bytes exceeds ${maxBytes}`);
  const type = (c.req.header('content-type') ?? '').toLowerCase();
  if (type.includes(PROTOBUF_CONTENT_TYPE)) return { kind: 'protobuf', bytes };
  if (bytes.length === 0) return { kind: 'json', value: {} };
  try {
    return { kind: 'json', value: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch (err) {
    throw new TinkerHttpError(422, [{ type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${(err as Error).message}` }]);
  }
}

/**
 * `value` checked by `schema`; a failure is a 422 listing every issue FastAPI-style (`loc` starts with `body`).
 * @example const req = validated(forwardRequest, body.value);
 */
export function validated<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new TinkerHttpError(
    422,
    result.error.issues.map((issue) => ({
      type: issue.code,
      loc: ['body', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
      msg: issue.message,
      ...('input' in issue ? { input: issue.input } : {}),
      ctx: contextOf(issue),
    })),
  );
}

/** Answers an error raised while handling a request (unknown errors: 500 with their message). */
export function errorResponse(c: Context, err: unknown): Response {
  if (err instanceof TinkerHttpError) return c.json({ detail: err.detail }, err.status);
  return c.json({ detail: (err as Error).message ?? 'Internal error' }, 500);
}

/** True when the client asked for protobuf results (`Accept: application/x-protobuf`). */
export function wantsProtobuf(c: Context): boolean {
  return (c.req.header('accept') ?? '').toLowerCase().includes(PROTOBUF_CONTENT_TYPE);
}

/** FastAPI's `ctx` of an issue: the allowed values, the violated bound, or the error. */
function contextOf(issue: z.core.$ZodIssue): Record<string, unknown> {
  if (issue.code === 'invalid_value') return { expected: issue.values.map((v) => `'${String(v)}'`).join(', ') };
  if (issue.code === 'too_big') return { [issue.inclusive === false ? 'lt' : 'le']: issue.maximum };
  if (issue.code === 'too_small') return { [issue.inclusive === false ? 'gt' : 'ge']: issue.minimum };
  return { error: {} };
}
