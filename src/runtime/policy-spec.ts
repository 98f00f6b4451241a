/**
 * Which policies an evaluation compares: turnwise checkpoints and remote OpenAI-compatible models,
 * from the command line (`--policy <runOrCheckpoint>`, `--remote <spec>`) or a YAML file
 * (`--policies <file>`). One zod schema per kind (with a doc line per field) validates both, so a
 * mistake names the flag or key at fault.
 */
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { configErrorFrom } from '../core/config/issues.js';
import { InvalidArgumentError, InvalidConfigError } from '../core/errors.js';
import type { OpenAIChatConfig } from '../policies/openai-chat.js';

const nameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'expected letters, digits, ".", "_" or "-"')
  .describe('Label of the policy in the comparison table and the run store.');

/** A turnwise checkpoint (a run folder means its latest checkpoint). */
export const checkpointPolicySchema = z
  .object({
    name: nameSchema.optional(),
    checkpoint: z.string().min(1).describe('Run folder (its latest checkpoint) or checkpoint folder.'),
    greedy: z.boolean().optional().describe('Argmax decoding instead of sampling at the run temperature.'),
  })
  .strict();

/** A model behind an OpenAI-compatible chat-completions API. */
export const remotePolicySchema = z
  .object({
    name: nameSchema,
    baseURL: z.string().regex(/^https?:\/\//, 'expected an http(s) URL').describe('API root, e.g. http://localhost:8000/v1.'),
    model: z.string().min(1).describe('Model id sent with each request.'),
    keyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name').optional().describe('Environment variable holding the API key.'),
    temperature: z.number().min(0).max(2).optional().describe('Sampling temperature (server default when absent).'),
    topP: z.number().gt(0).max(1).optional().describe('Nucleus mass (server default when absent).'),
    maxTokens: z.number().int().positive().optional().describe('max_tokens per reply.'),
    toolChoice: z.enum(['auto', 'required']).optional().describe("tool_choice sent with the environment's tools: auto (the model decides) or required (it must call one; turnwise serve keeps such a reply to the call's grammar). Default auto."),
    concurrency: z.number().int().positive().default(4).describe('Requests in flight at once.'),
    maxRetries: z.number().int().min(0).default(5).describe('Retries on 408/409/429/5xx and connection errors (exponential back-off).'),
    sendSeed: z.boolean().default(true).describe('Send the per-turn sampling seed (OpenAI `seed`).'),
    acknowledgement: z.string().optional().describe("Assistant reply to the instruction (default AgentGym's)."),
    timeoutMs: z.number().int().positive().default(120_000).describe('Per-request HTTP timeout.'),
  })
  .strict();

/** The YAML policy file: `policies: [ … ]`. */
export const policyFileSchema = z
  .object({
    policies: z.array(z.union([checkpointPolicySchema, remotePolicySchema])).min(1).describe('Policies to compare, in table order.'),
  })
  .strict();

/** A policy to evaluate. */
export type PolicySpec =
  | { readonly kind: 'checkpoint'; readonly name: string; readonly location: string; readonly greedy: boolean }
  | { readonly kind: 'remote'; readonly name: string; readonly config: OpenAIChatConfig };

function remoteSpec(r: z.output<typeof remotePolicySchema>): PolicySpec {
  const { maxRetries, ...rest } = r;
  return { kind: 'remote', name: r.name, config: { ...rest, retry: { maxRetries } } };
}

/**
 * A checkpoint policy from `--policy <runOrCheckpoint>` (name: the folder's base name).
 * @example checkpointSpec('runs/babyai-grpo') // { kind: 'checkpoint', name: 'babyai-grpo', … }
 */
export function checkpointSpec(location: string, greedy = false, name?: string): PolicySpec {
  return { kind: 'checkpoint', name: name ?? basename(resolve(location)), location, greedy };
}

const REMOTE_KEYS: Record<string, string> = {
  model: 'model',
  'key-env': 'keyEnv',
  temperature: 'temperature',
  'top-p': 'topP',
  'max-tokens': 'maxTokens',
  'tool-choice': 'toolChoice',
  concurrency: 'concurrency',
  'max-retries': 'maxRetries',
  seed: 'sendSeed',
  'timeout-ms': 'timeoutMs',
};
const NUMERIC = new Set(['temperature', 'topP', 'maxTokens', 'concurrency', 'maxRetries', 'timeoutMs']);

/**
 * Parses `--remote <name>=<baseURL>,model=<m>[,key-env=VAR][,temperature=t][,top-p=p][,max-tokens=n][,tool-choice=auto|required][,concurrency=n][,max-retries=n][,seed=false]`.
 * @example parseRemoteFlag('qwen=http://localhost:8000/v1,model=Qwen2.5-7B-Instruct,key-env=VLLM_KEY')
 */
export function parseRemoteFlag(text: string): PolicySpec {
  const eq = text.indexOf('=');
  if (eq <= 0) throw InvalidArgumentError.format('--remote', `expected <name>=<baseURL>,model=<model>[,key-env=VAR], got ${JSON.stringify(text)}`);
  const name = text.slice(0, eq);
  const [baseURL, ...pairs] = text.slice(eq + 1).split(',');
  const raw: Record<string, unknown> = { name, baseURL };
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : pair.trim();
    const field = REMOTE_KEYS[key];
    if (field === undefined || at <= 0) {
      throw InvalidArgumentError.format(`--remote ${name}`, `expected key=value with key one of ${Object.keys(REMOTE_KEYS).join(', ')}, got ${JSON.stringify(pair)}`);
    }
    const value = pair.slice(at + 1).trim();
    raw[field] = NUMERIC.has(field) ? Number(value) : field === 'sendSeed' ? value !== 'false' : value;
  }
  const parsed = remotePolicySchema.safeParse(raw);
  if (!parsed.success) throw configErrorFrom(parsed.error, remotePolicySchema, raw, `--remote ${name}`);
  return remoteSpec(parsed.data);
}

/**
 * Reads a YAML policy file.
 * @example loadPolicyFile('configs/compare.yaml') // [{ kind: 'checkpoint', … }, { kind: 'remote', … }]
 */
export function loadPolicyFile(path: string): PolicySpec[] {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new InvalidConfigError('<file>', `cannot read policy file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = policyFileSchema.safeParse(raw);
  if (!parsed.success) throw configErrorFrom(parsed.error, policyFileSchema, raw, path);
  return parsed.data.policies.map((p) => ('checkpoint' in p ? checkpointSpec(p.checkpoint, p.greedy ?? false, p.name) : remoteSpec(p)));
}

/**
 * Checks that names are unique (they label table rows and run-store runs).
 * @example uniqueNames([a, b]) // throws if a.name === b.name
 */
export function uniqueNames(specs: readonly PolicySpec[]): void {
  const seen = new Set<string>();
  for (const spec of specs) {
    if (seen.has(spec.name)) throw InvalidArgumentError.format('policies', `two policies are named '${spec.name}'; give one a name (YAML 'name:')`);
    seen.add(spec.name);
  }
}
