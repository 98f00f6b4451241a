/**
 * The lean `node:http` path of `turnwise env serve`: the protocol routes (`/step`, `/reset`,
 * `/observation`, `/create`, `/close`) answered straight from Node's request and response, without
 * building Fetch-API `Request`/`Response` objects or running a middleware chain — that per-request
 * machinery, not the environment, was most of a step's cost through Hono (issue 7: ~1.65 ms per
 * sequential round trip). Everything else (`GET /`, CORS preflight, unknown paths, and any URL not
 * in the plain form `/route[?simple-query]`) falls through to the Hono app's listener, which stays
 * the reference: both call {@link AgentGymProtocol} for every answer, and this file reproduces only
 * the HTTP envelope Hono puts around it (header names and order, CORS headers, the body-size cap,
 * the UTF-8 decoding of `Request.text()`). `test/e2e/agentgym-server-fast-path.test.ts` sends the same
 * requests to both and compares the bytes.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { EXTENSION_HEADER } from '../connection.js';
import { type AgentGymProtocol, PROTOCOL_ROUTES, type ProtocolAnswer, tooLargeAnswer } from './protocol.js';

/** Options of {@link createFastListener}. */
export interface FastListenerOptions {
  readonly protocol: AgentGymProtocol;
  /** Largest request body accepted, in bytes (413 beyond, as Hono's `bodyLimit`). */
  readonly maxBodyBytes: number;
  /** Add the CORS headers Hono's `cors({ origin: (o) => o || '*', credentials: true })` adds. */
  readonly cors: boolean;
  /** Listener for every request this path does not take (the Hono app's). */
  readonly fallback: RequestListener;
}

// Queries of the plain form `id=3&x=y` only: anything else (fragments, raw non-ASCII, quotes)
// goes to Hono, whose WHATWG URL parsing then decides — so the two paths cannot disagree on it.
const SIMPLE_QUERY_RE = /^[A-Za-z0-9_.~%+=&-]*$/;
// Request.text() decodes as UTF-8 with a BOM stripped and bad bytes replaced; so does TextDecoder.
const decoder = new TextDecoder();
// As @hono/node-server's drain of a refused body: give up after this long or this much.
const DRAIN_TIMEOUT_MS = 500;
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * A `node:http` request listener that answers the protocol routes itself and hands the rest to `fallback`.
 * @example
 * const listener = createFastListener({ protocol: built.protocol, maxBodyBytes: 1 << 20, cors: false, fallback: getRequestListener(built.app.fetch) });
 * http.createServer(listener).listen(36002);
 */
export function createFastListener(options: FastListenerOptions): RequestListener {
  const { protocol, maxBodyBytes, cors, fallback } = options;

  /** `close`: the body was left unread, so the connection ends with this answer (`Connection: close`, as the app's middleware adds). */
  const send = (req: IncomingMessage, res: ServerResponse, answer: ProtocolAnswer, close = false): void => {
    const text = JSON.stringify(answer.body);
    res.statusCode = answer.status;
    const connection = close ? ['connection', 'close'] : [];
    if (cors) {
      // As @hono/node-server writes a Headers object: its (sorted, lower-case) names, then content-length.
      res.writeHead(answer.status, [
        'access-control-allow-credentials', 'true',
        'access-control-allow-origin', req.headers.origin || '*',
        ...connection,
        'content-type', 'application/json',
        'vary', 'Origin',
        'content-length', String(Buffer.byteLength(text)),
      ]);
    } else if (close) {
      // A Headers object of two entries, sorted; Node adds Date and the length it counts at end().
      res.setHeader('connection', 'close');
      res.setHeader('content-type', 'application/json');
    } else {
      // As it writes Hono's plain `{"Content-Type"}`: Node adds Date, Connection, Keep-Alive, then the length it counts at end().
      res.setHeader('Content-Type', 'application/json');
    }
    res.end(text);
  };

  // The rest of the body is drained (bounded) so the client can finish writing and read the 413, then the connection ends.
  const refuse = (req: IncomingMessage, res: ServerResponse): void => {
    closing.add(req.socket);
    send(req, res, tooLargeAnswer(maxBodyBytes), true);
    drain(req);
  };

  return (req, res) => {
    // A request pipelined behind a refused body: the connection is ending, so it is not run (nobody would get its answer).
    if (closing.has(req.socket)) {
      req.socket.destroy();
      return;
    }
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const entry = Object.hasOwn(PROTOCOL_ROUTES, path) ? PROTOCOL_ROUTES[path] : undefined;
    const query = mark < 0 ? '' : url.slice(mark + 1);
    if (!entry || entry.method !== req.method || !SIMPLE_QUERY_RE.test(query)) {
      fallback(req, res);
      return;
    }
    corkUntilIdle(req.socket);
    const contentType = contentTypeOf(req.rawHeaders);
    const extension = req.headers[EXTENSION_HEADER] === '1';
    const answer = (body: string): void => {
      protocol
        .handle(entry.route, { body, contentType, query: entry.method === 'GET' ? new URLSearchParams(query) : null, extension })
        .then((a) => send(req, res, a))
        .catch(() => res.destroy()); // unreachable (handle never rejects); a half-written answer cannot be mended
    };
    if (entry.method === 'GET') {
      answer('');
      return;
    }
    // bodyLimit trusts a content-length (without transfer-encoding) and refuses before reading.
    const declared = req.headers['content-length'];
    if (declared !== undefined && req.headers['transfer-encoding'] === undefined && Number.parseInt(declared, 10) > maxBodyBytes) {
      refuse(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBodyBytes) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.off('end', onEnd);
      refuse(req, res);
    };
    const onEnd = () => answer(decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', () => res.destroy());
  };
}

const corked = new WeakSet<Socket>();
/** Sockets whose last answer said `Connection: close`. */
const closing = new WeakSet<Socket>();

/**
 * Holds a socket's writes until the event loop has run everything the current read started, then
 * sends them in one system call: the answers to a pipelined batch of requests (parsed from one read,
 * each answered a few microtasks later) leave together instead of one `writev` each — which was the
 * largest single cost of a pipelined step on the server.
 */
function corkUntilIdle(socket: Socket): void {
  if (corked.has(socket)) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}

/** The content-type as a Fetch `Headers` object reports it: every value of a repeated header, joined by ", ". */
function contentTypeOf(raw: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 12 && name.toLowerCase() === 'content-type') value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/** Reads and drops the rest of a refused body, within bounds, so the client is not reset while it still writes. */
function drain(req: IncomingMessage): void {
  if (req.readableEnded || req.destroyed) return;
  let bytes = 0;
  const forceClose = () => {
    cleanup();
    req.socket?.destroy();
  };
  const timer = setTimeout(forceClose, DRAIN_TIMEOUT_MS);
  timer.unref();
  const onData = (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_DRAIN_BYTES) forceClose();
  };
  const cleanup = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', cleanup);
    req.off('error', cleanup);
  };
  req.on('data', onData);
  req.on('end', cleanup);
  req.on('error', cleanup);
  req.resume();
}
