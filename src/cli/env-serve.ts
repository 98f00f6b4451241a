/**
 * `turnwise env serve <name>`: serves a native environment over AgentGym's HTTP protocol until
 * SIGINT/SIGTERM, printing one line with its URL (`--port 0` picks a free port).
 */
import { InvalidArgumentError } from '../core/errors.js';
import { startAgentGymServer } from '../envs/agentgym/server/serve.js';
import type { ProfileName } from '../envs/agentgym/server/profiles.js';
// Registers the built-in environments (this module is loaded only when its command runs).
import '../envs/index.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { exitCodeForSignal } from './exit-codes.js';
import { nextStopSignal } from './signals.js';

/** Options of the command. */
export interface EnvServeOptions {
  readonly port: number;
  readonly host: string;
  readonly cors: boolean;
  readonly maxSessions: number;
  readonly idleMs: number;
  readonly maxBodyBytes: number;
  /** JSON of the environment settings (e.g. `{"levels":["GoToRedBall"]}`). */
  readonly settings?: string;
  readonly profile?: string;
}

/**
 * Runs the server; resolves when it has stopped.
 * @example await envServeCommand('babyai', { port: 36002, host: '127.0.0.1', cors: false, maxSessions: 4096, idleMs: 600000, maxBodyBytes: 1048576 });
 */
export async function envServeCommand(name: string, options: EnvServeOptions): Promise<void> {
  if (name === 'agentgym') throw InvalidArgumentError.format('name', 'agentgym is the client of remote servers; serve a native environment (see `turnwise envs`)');
  const spec = getEnvironmentSpec(name);
  let settings: Record<string, unknown> = {};
  if (options.settings !== undefined) {
    try {
      settings = JSON.parse(options.settings) as Record<string, unknown>;
    } catch (error) {
      throw InvalidArgumentError.format('--settings', `expected JSON, got ${JSON.stringify(options.settings)}: ${(error as Error).message}`);
    }
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) throw InvalidArgumentError.format('--settings', 'expected a JSON object');
  }
  if (options.profile !== undefined && !['babyai', 'textcraft', 'generic'].includes(options.profile)) {
    throw InvalidArgumentError.format('--profile', `expected babyai, textcraft or generic, got ${JSON.stringify(options.profile)}`);
  }
  const server = await startAgentGymServer({
    spec,
    settings,
    ...(options.profile ? { profile: options.profile as ProfileName } : {}),
    port: options.port,
    host: options.host,
    cors: options.cors,
    maxSessions: options.maxSessions,
    idleMs: options.idleMs,
    maxBodyBytes: options.maxBodyBytes,
  });
  // Listening before the line that tells a caller the server is up, so no signal falls in between.
  const stopped = nextStopSignal();
  console.log(
    `serving ${name} on ${server.url} (AgentGym ${server.profile.name} protocol, id key "id"; ` +
      `max ${options.maxSessions} instances, idle expiry ${options.idleMs} ms${options.cors ? ', CORS on' : ''})`,
  );
  const signal = await stopped;
  await server.stop();
  process.exitCode = exitCodeForSignal(signal);
}
