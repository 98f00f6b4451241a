/**
 * User/password and NKey authentication against a real nats-server whose config lists one user of
 * each kind; wrong credentials are refused with an error naming the server URL. And the setup
 * docs/distributed.md recommends: a user for the run, and users without publish rights on `turnwise.>` and the
 * JetStream API, who cannot pre-seed a run's trajectory stream.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { nkeys } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats, NatsConnectError } from '../../src/bus/nats-connect.js';
import { NatsBus } from '../../src/bus/nats-bus.js';
import { openRunInfra } from '../../src/runtime/nats/run-infra.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-auth-'));
// A fresh user key pair: the server knows only its public key, the client signs with its seed.
const user = nkeys.createUser();
const seed = new TextDecoder().decode(user.getSeed());
let server: NatsServerHandle;

beforeAll(async () => {
  server = await startNatsServer({
    extraConfig: `authorization {\n  users = [\n    { user: "alice", password: "correct-horse" }\n    { nkey: "${user.getPublicKey()}" }\n  ]\n}`,
  });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Round-trips one request over a fresh bus, proving the connection is authenticated and usable. */
async function echo(bus: NatsBus): Promise<unknown> {
  const sub = bus.subscribe('auth.echo', (payload) => ({ echoed: payload }));
  try {
    return await bus.request('auth.echo', { n: 7 }, { timeoutMs: 5000 });
  } finally {
    sub.unsubscribe();
    await bus.close();
  }
}

describe('NATS authentication', () => {
  it('accepts the configured user and password', async () => {
    const bus = await NatsBus.connect({ servers: server.url, user: 'alice', pass: 'correct-horse' });
    expect(await echo(bus)).toEqual({ echoed: { n: 7 } });
  });

  it('accepts the configured NKey, given as a seed or as a file holding it', async () => {
    expect(await echo(await NatsBus.connect({ servers: server.url, nkeySeed: seed }))).toEqual({ echoed: { n: 7 } });
    const file = join(dir, 'user.nk');
    writeFileSync(file, `${seed}\n`);
    expect(await echo(await NatsBus.connect({ servers: server.url, nkeySeed: file }))).toEqual({ echoed: { n: 7 } });
  });

  it('refuses no credentials, a wrong password, an unknown user and an unknown NKey, naming the server', async () => {
    const unknownKey = new TextDecoder().decode(nkeys.createUser().getSeed());
    const attempts = [
      { servers: server.url },
      { servers: server.url, user: 'alice', pass: 'wrong' },
      { servers: server.url, user: 'mallory', pass: 'correct-horse' },
      { servers: server.url, nkeySeed: unknownKey },
    ];
    for (const attempt of attempts) {
      const refused = await connectNats({ ...attempt, maxReconnectAttempts: 0 }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(NatsConnectError);
      const error = refused as NatsConnectError;
      expect(error.servers).toBe(server.url);
      expect(error.message).toContain(`cannot connect to NATS at ${server.url}`);
      expect(error.reason).toMatch(/Authorization Violation/i);
    }
  });
});

describe('the recommended NATS setup of docs/distributed.md: one user for the run, read-only users for everyone else', () => {
  it("lets the run's user publish trajectories, and refuses another user's attempt to pre-seed a run's stream", async () => {
    const locked = await startNatsServer({
      extraConfig: [
        'authorization {',
        '  users = [',
        '    { user: "turnwise", password: "run-secret" }',
        '    { user: "viewer", password: "look-only", permissions: { publish: { deny: ["turnwise.>", "$JS.API.>", "$KV.>", "$O.>"] }, subscribe: { allow: ["_INBOX.>"] } } }',
        '  ]',
        '}',
      ].join('\n'),
    });
    try {
      const run = await NatsBus.connect({ servers: locked.url, user: 'turnwise', pass: 'run-secret' });
      const infra = await openRunInfra(run.connection, 'auth-run-0123abcd');
      const subject = infra.names.trajSubject(0);
      await infra.js.publish(subject, new Uint8Array([1]), { msgID: 'a' });
      const viewer = await connectNats({ servers: locked.url, user: 'viewer', pass: 'look-only', maxReconnectAttempts: 0 });
      const refused = await jetstream(viewer)
        .publish(subject, new Uint8Array([2]), { msgID: 'forged', timeout: 2000 })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(String(refused)).toContain(`Permissions Violation for Publish to "${subject}"`);
      expect((await infra.jsm.streams.info(infra.names.trajStream)).state.messages).toBe(1);
      await viewer.close();
      await run.close();
    } finally {
      await locked.stop();
    }
  });
});
