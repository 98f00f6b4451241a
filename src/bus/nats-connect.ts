/**
 * Connection options for a real NATS deployment, passed through to `@nats-io/transport-node`'s
 * `connect`: servers, token, user/password, NKey seed, credentials file (JWT + NKey), TLS, and
 * reconnect behaviour. A refused connection becomes a {@link NatsConnectError} naming the server
 * and the reason (e.g. `Authorization Violation` for a wrong token).
 */
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type NatsConnection, type NodeConnectionOptions, nkeyAuthenticator } from '@nats-io/transport-node';
import { InvalidArgumentError, TurnwiseError } from '../core/errors.js';
import { redactCredentials } from '../core/redact.js';

/** How to reach and authenticate with NATS. Exactly one auth method (or none). */
export interface NatsConnectOptions {
  /** `nats://host:port`, or several for a cluster. */
  readonly servers: string | readonly string[];
  readonly token?: string;
  readonly user?: string;
  readonly pass?: string;
  /** NKey seed (`SU…`) as text, or a path to a file holding it. */
  readonly nkeySeed?: string;
  /** A `.creds` file (user JWT + NKey seed), as `nsc` writes it. */
  readonly credsFile?: string;
  /** TLS settings (`{ caFile, certFile, keyFile }` …), passed through. */
  readonly tls?: NodeConnectionOptions['tls'];
  /** Client name shown by the server's monitoring (default `turnwise`). */
  readonly name?: string;
  /** Reconnect attempts after a disconnect (-1: forever, the default: a run outlives server restarts). */
  readonly maxReconnectAttempts?: number;
  /** Wait between reconnect attempts, ms (default 250). */
  readonly reconnectTimeWaitMs?: number;
  /** Connect timeout, ms (default 5000). */
  readonly timeoutMs?: number;
}

/**
 * The server refused or could not be reached.
 * @example catch (e) { if (e instanceof NatsConnectError) console.error(e.servers, e.reason); }
 */
export class NatsConnectError extends TurnwiseError {
  constructor(
    servers: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    // A URL may carry a user and password (or a token): never in a message.
    super(`cannot connect to NATS at ${redactCredentials(servers)}: ${redactCredentials(reason)}`, options);
    this.servers = redactCredentials(servers);
    this.reason = redactCredentials(reason);
  }
  /** The servers tried, credentials redacted. */
  readonly servers: string;
  readonly reason: string;
}

function seedBytes(seedOrPath: string): Uint8Array {
  const text = seedOrPath.trim().startsWith('S') && !seedOrPath.includes('/') ? seedOrPath : readFileSync(seedOrPath, 'utf8');
  return new TextEncoder().encode(text.trim());
}

/** Builds the options object `connect` takes (exported for tests). */
export function natsConnectionOptions(options: NatsConnectOptions): NodeConnectionOptions {
  const servers = typeof options.servers === 'string' ? [options.servers] : [...options.servers];
  if (servers.length === 0) throw InvalidArgumentError.format('servers', 'expected at least one nats:// URL');
  const methods = [options.token !== undefined, options.user !== undefined, options.nkeySeed !== undefined, options.credsFile !== undefined].filter(Boolean).length;
  if (methods > 1) throw InvalidArgumentError.format('auth', 'give one of token, user/pass, nkeySeed or credsFile');
  if (options.pass !== undefined && options.user === undefined) throw InvalidArgumentError.format('pass', 'a password needs a user');
  const out: NodeConnectionOptions = {
    servers,
    name: options.name ?? 'turnwise',
    maxReconnectAttempts: options.maxReconnectAttempts ?? -1,
    reconnectTimeWait: options.reconnectTimeWaitMs ?? 250,
    timeout: options.timeoutMs ?? 5000,
    // Keep going while the server restarts: buffered publishes are flushed on reconnect.
    waitOnFirstConnect: false,
  };
  if (options.token !== undefined) out.token = options.token;
  if (options.user !== undefined) out.user = options.user;
  if (options.pass !== undefined) out.pass = options.pass;
  if (options.nkeySeed !== undefined) out.authenticator = nkeyAuthenticator(seedBytes(options.nkeySeed));
  if (options.credsFile !== undefined) {
    const file = options.credsFile;
    out.authenticator = credsAuthenticator(() => new Uint8Array(readFileSync(file)));
  }
  if (options.tls !== undefined) out.tls = options.tls;
  return out;
}

/**
 * Connects, turning a refusal into a {@link NatsConnectError}.
 * @example const nc = await connectNats({ servers: 'nats://127.0.0.1:4222', token: process.env.NATS_TOKEN });
 */
export async function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  const resolved = natsConnectionOptions(options);
  try {
    return await connect(resolved);
  } catch (error) {
    const servers = (resolved.servers as string[]).join(',');
    throw new NatsConnectError(servers, error instanceof Error ? error.message : String(error), { cause: error });
  }
}
