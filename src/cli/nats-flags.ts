/**
 * The NATS connection flags shared by `turnwise train --nats` and `turnwise worker`. Secrets may
 * come from the environment (`NATS_TOKEN`, `NATS_USER`, `NATS_PASSWORD`) so that they stay out of
 * `ps`. Only types from the NATS layer, so registering the flags loads nothing heavy.
 */
import type { NatsConnectOptions } from '../bus/nats-connect.js';

/** The NATS flags as commander parses them. */
export interface NatsFlags {
  readonly nats: string;
  readonly natsToken?: string;
  readonly natsUser?: string;
  readonly natsPassword?: string;
  readonly natsNkey?: string;
  readonly natsCreds?: string;
  readonly natsCa?: string;
  readonly natsCert?: string;
  readonly natsKey?: string;
}

/** Help lines of the NATS flags, for commander's `.option`. */
export const NATS_FLAG_HELP: readonly (readonly [string, string])[] = [
  ['--nats-token <token>', 'NATS auth token (default: $NATS_TOKEN)'],
  ['--nats-user <user>', 'NATS user (default: $NATS_USER); password from --nats-password or $NATS_PASSWORD'],
  ['--nats-password <pass>', 'NATS password'],
  ['--nats-nkey <seedOrFile>', 'NKey seed, or a file holding it'],
  ['--nats-creds <file>', 'credentials file (user JWT + NKey seed)'],
  ['--nats-ca <file>', 'TLS: CA certificate to trust'],
  ['--nats-cert <file>', 'TLS: client certificate'],
  ['--nats-key <file>', 'TLS: client key'],
];

/**
 * Connection options from the flags and the environment.
 * @example natsOptionsOf({ nats: 'nats://127.0.0.1:4222', natsToken: 's3cret' })
 */
export function natsOptionsOf(flags: NatsFlags, env: NodeJS.ProcessEnv = process.env): NatsConnectOptions {
  const servers = flags.nats.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  const token = flags.natsToken ?? env.NATS_TOKEN;
  const user = flags.natsUser ?? env.NATS_USER;
  const pass = flags.natsPassword ?? env.NATS_PASSWORD;
  const tls =
    flags.natsCa || flags.natsCert || flags.natsKey
      ? { ...(flags.natsCa ? { caFile: flags.natsCa } : {}), ...(flags.natsCert ? { certFile: flags.natsCert } : {}), ...(flags.natsKey ? { keyFile: flags.natsKey } : {}) }
      : undefined;
  return {
    servers,
    ...(token ? { token } : {}),
    ...(user ? { user } : {}),
    ...(user && pass ? { pass } : {}),
    ...(flags.natsNkey ? { nkeySeed: flags.natsNkey } : {}),
    ...(flags.natsCreds ? { credsFile: flags.natsCreds } : {}),
    ...(tls ? { tls } : {}),
  };
}
