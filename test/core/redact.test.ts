import { describe, expect, it } from 'vitest';
import { reportFailure } from '../../src/cli/failure.js';
import { redactCredentials } from '../../src/core/redact.js';
import { NatsConnectError } from '../../src/bus/nats-connect.js';

describe('redactCredentials', () => {
  it('hides a user and password, or a token, in every URL, and nothing else', () => {
    expect(redactCredentials('nats://alice:s3cret@10.0.0.5:4222,nats://tok3n@h2:4222 and http://plain:80/x')).toBe('nats://***@10.0.0.5:4222,nats://***@h2:4222 and http://plain:80/x');
    expect(redactCredentials('mail alice@example.com at 12:00')).toBe('mail alice@example.com at 12:00');
  });

  it('leaves no password in a NATS connection error, its fields, or a failure report with causes and stacks', () => {
    const url = 'nats://alice:s3cret@127.0.0.1:4999';
    const error = new NatsConnectError(url, `connection refused (${url})`, { cause: new Error(`ECONNREFUSED ${url}`) });
    expect(error.message).toBe('cannot connect to NATS at nats://***@127.0.0.1:4999: connection refused (nats://***@127.0.0.1:4999)');
    expect(`${error.servers} ${error.reason}`).not.toMatch(/s3cret|alice/);
    for (const debug of [false, true]) {
      let text = '';
      reportFailure(error, { debug, write: (t) => (text += t) });
      expect(text).toMatch(/nats:\/\/\*\*\*@127\.0\.0\.1:4999/);
      expect(text).not.toMatch(/s3cret/);
    }
  });
});
