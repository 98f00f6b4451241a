/**
 * An HTTP proxy for fault tests of the Tinker client: it forwards every request to a target server
 * unchanged, and holds the answer to the first request of each chosen route for `holdMs` before
 * sending it — long after the client's request timeout, so the client gives up and retries while
 * the server has already done the work. What the server answered is what the client eventually
 * gets for the retry; the held answer is dropped with its connection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running proxy. */
export interface DelayingProxy {
  readonly url: string;
  /** Routes (path suffixes) whose first answer was held, in the order it happened. */
  readonly held: string[];
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * @example const proxy = await startDelayingProxy(server.url, ['/forward_backward', '/optim_step'], 5_000);
 */
export async function startDelayingProxy(target: string, routes: readonly string[], holdMs: number): Promise<DelayingProxy> {
  const held: string[] = [];
  const pending = new Set(routes);
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const data = await body(req);
      const path = req.url ?? '/';
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)) as [string, string][]);
      const answer = await fetch(`${target}${path}`, { method: req.method ?? 'GET', headers, redirect: 'manual', ...(data.length > 0 ? { body: data } : {}) });
      const payload = Buffer.from(await answer.arrayBuffer());
      const route = [...pending].find((r) => path.endsWith(r));
      if (route !== undefined) {
        pending.delete(route);
        held.push(route);
        await new Promise((resolve) => setTimeout(resolve, holdMs));
      }
      if (res.destroyed) return; // the client gave up on this one
      const out: Record<string, string> = {};
      answer.headers.forEach((value, key) => {
        if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(key)) out[key] = value;
      });
      res.writeHead(answer.status, out);
      res.end(payload);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
