/**
 * `env.settings` of the `agentgym` environment, validated with zod (the project's schema library)
 * so that a bad value is an `InvalidConfigError` naming `env.settings.<key>`.
 *
 * ```yaml
 * env:
 *   name: agentgym
 *   settings: { type: sciworld, url: http://127.0.0.1:36003, trainIds: 0-1999, testIds: 2000-2199 }
 * ```
 */
import { z } from 'zod';
import { InvalidConfigError } from '../../core/errors.js';
import { AGENTGYM_TYPES } from './adapters/types.js';

const nonNegInt = () => z.number().int().min(0);

/** Task indices: a list, an inclusive range `"first-last"`, or `{ from, to }` (inclusive). */
export const idsSchema = z.union([
  z.array(nonNegInt()).min(1),
  z.string().regex(/^\s*\d+\s*-\s*\d+\s*$/, 'expected "first-last", e.g. "0-999"'),
  z.object({ from: nonNegInt(), to: nonNegInt() }).strict(),
]);

export const agentGymSettingsSchema = z
  .object({
    type: z.enum(AGENTGYM_TYPES).describe('AgentGym server type (the AgentGym task name); `generic` follows AgentGym\'s generic contract.'),
    url: z.url({ protocol: /^https?$/ }).describe('Server base URL, e.g. http://127.0.0.1:36003 (for maze/wordle the /maze or /wordle prefix is added when missing).'),
    timeoutMs: z.number().int().positive().default(20_000).describe('Deadline of one HTTP attempt, in milliseconds (keep it below runtime.envTimeoutMs).'),
    retries: nonNegInt().default(3).describe('Retries after a failed attempt, where repeating the request is safe.'),
    backoffMs: z.number().positive().default(100).describe('Back-off before the first retry, in milliseconds (doubles each retry, with jitter).'),
    maxBackoffMs: z.number().positive().default(2_000).describe('Cap on the back-off, in milliseconds.'),
    connections: z.number().int().positive().default(64).describe('Keep-alive sockets to the server.'),
    pipelining: z
      .number()
      .int()
      .positive()
      .max(256)
      .default(1)
      .describe(
        'Requests in flight on one socket (HTTP/1.1 pipelining). 16 suits `turnwise env serve` (fewer sockets, ~2x the steps/s); keep 1 for AgentGym\'s Python servers, which answer one request at a time per connection. A /step is never re-sent after its socket failed.',
      ),
    reportAfter: z.number().int().positive().default(3).describe('Report the server as failing after this many failed requests in a row (then at each doubling).'),
    trainIds: idsSchema.optional().describe('Task indices of the train split (default: known for babyai, searchqa and maze).'),
    testIds: idsSchema.optional().describe('Task indices of the test split (default: known for babyai, searchqa and maze).'),
    worldType: z.enum(['Text', 'Embody', 'Hybrid']).default('Text').describe('ALFWorld world_type sent with /reset.'),
    instruction: z.string().min(1).optional().describe('Instruction shown to the agent instead of the built-in one for this type.'),
    extensions: z.boolean().default(true).describe('Ask turnwise servers for available actions and success flags (a request header other servers ignore).'),
    levels: z.array(z.string()).optional().describe('BabyAI levels, for the default babyai catalog and tokenizer corpus (as the native babyai settings).'),
    corpusFile: z.string().optional().describe('Text file of sample observations to train the tokenizer on (types without a native twin).'),
  })
  .strict();

/** Validated settings with defaults. */
export type AgentGymSettings = z.output<typeof agentGymSettingsSchema>;

/**
 * Validates `env.settings` for the `agentgym` environment.
 * @example parseAgentGymSettings({ type: 'babyai', url: 'http://127.0.0.1:36002' }).timeoutMs // 20000
 */
export function parseAgentGymSettings(raw: Readonly<Record<string, unknown>> | undefined): AgentGymSettings {
  const result = agentGymSettingsSchema.safeParse(raw ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = ['env', 'settings', ...(issue?.path ?? []).map(String)].join('.');
  const extra = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more: ${result.error.issues.slice(1).map((i) => i.path.join('.') || '<root>').join(', ')})` : '';
  throw new InvalidConfigError(path, `${issue?.message ?? 'invalid'}${extra}`);
}

/** The URL with the LMRL-Gym route prefix the type needs. */
export function serverUrl(settings: AgentGymSettings): string {
  const base = settings.url.replace(/\/+$/, '');
  const prefix = settings.type === 'maze' ? '/maze' : settings.type === 'wordle' ? '/wordle' : '';
  return prefix && !base.endsWith(prefix) ? `${base}${prefix}` : base;
}
