/**
 * A NATS URL's password (or token) never shows in what `turnwise` prints: a worker pointed at a
 * server that is not there, with credentials in the URL, fails naming the server without them,
 * with and without --debug (stack traces and causes).
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/nats-server.js';
import { killProcess, spawnCli } from '../helpers/nats-run.js';

const procs: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map(killProcess));
});

describe('credentials in a NATS URL', () => {
  for (const debug of [false, true]) {
    it(`are not printed when the connection fails${debug ? ' (--debug)' : ''}`, async () => {
      const port = await freePort(); // nothing listens there
      const worker = spawnCli(procs, ['worker', '--nats', `nats://alice:s3cret@127.0.0.1:${port}`, '--run', 'x', '--role', 'episodes', ...(debug ? ['--debug'] : [])]);
      expect(await worker.exit, worker.output()).not.toBe(0);
      expect(worker.output()).toMatch(new RegExp(`cannot connect to NATS at nats://\\*\\*\\*@127\\.0\\.0\\.1:${port}`));
      expect(worker.output()).not.toMatch(/s3cret/);
    });
  }
});
