/**
 * Credentials in URLs never reach a message: `nats://alice:s3cret@host:4222` (user and password) and
 * `nats://s3cret@host:4222` (a token) print as `nats://***@host:4222`. Applied where text about a
 * connection leaves the process: error messages, failure reports, log lines.
 */

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/**
 * `text` with the user-info part of every URL in it replaced by `***`.
 * @example redactCredentials('cannot connect to nats://alice:s3cret@10.0.0.5:4222') // 'cannot connect to nats://***@10.0.0.5:4222'
 */
export function redactCredentials(text: string): string {
  return text.replace(USERINFO, '$1***@');
}
