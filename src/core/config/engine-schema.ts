/**
 * `model.engine` and `model.tinker`: where a run's model work happens. `local` is turnwise's own
 * tfjs model in this process (the default, and what every test can run); `tinker` sends sampling,
 * forward-backward passes and optimizer steps to a server speaking the Tinker training API (hosted
 * Tinker, SkyRL tx on a user's GPUs, `turnwise tinker serve`), while episodes, rewards and
 * advantages stay in turnwise. Shared by both the config schema and the engine code.
 */
import { z } from 'zod';

const posInt = () => z.number().int().positive();

/** The `model.tinker` section. */
export const tinkerSchema = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .describe('Base URL of the Tinker API server, e.g. http://gpu-box:8000 for SkyRL tx or `turnwise tinker serve` (the /api/v1 prefix is added).'),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .nullable()
      .default('TINKER_API_KEY')
      .describe('Name of the environment variable holding the API key (the key itself never goes in a config, log or run folder); null sends none.'),
    baseModel: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe("The server's name of the base model (e.g. Qwen/Qwen3-4B-Instruct-2507); null: the last path segment of model.from. model.from still supplies the tokenizer, chat template and eos ids."),
    server: z
      .enum(['tinker', 'skyrl'])
      .default('tinker')
      .describe(
        "Which server's behaviour to assume where the API does not tell: tinker (hosted Tinker and `turnwise tinker serve`: per-token losses summed, grad_clip_norm honoured) or skyrl (SkyRL tx: each sequence's loss over its weight sum, averaged over sequences; no gradient clipping, so algorithm.gradClip must be null).",
      ),
    reduction: z
      .enum(['sum', 'sequence-mean'])
      .nullable()
      .default(null)
      .describe("Override of the server's loss reduction rule (null: the server profile's). turnwise scales what it sends so that algorithm.lossAgg comes out as configured under either rule."),
    loraSeed: z.number().int().min(0).nullable().default(null).describe('Seed of the adapter initialisation on the server; null: derived from seed.'),
    requestTimeoutMs: posInt().default(60_000).describe('Timeout of one ordinary HTTP request (a submission, a download); a timed-out call is retried with the same sequence id.'),
    pollTimeoutMs: posInt().default(310_000).describe("Timeout of one retrieve_future long poll (SkyRL holds a poll up to 300 s); a poll that times out is repeated."),
    futureTimeoutMs: posInt().default(3_600_000).describe('How long one queued call (a forward-backward, an optimizer step, a sample) may take from submission to result before the run fails naming it.'),
    retries: z.number().int().min(0).default(8).describe('Retries of a call after a timeout, a 5xx or a lost connection, with exponential backoff and jitter.'),
    concurrency: posInt().default(64).describe('Most HTTP requests in flight at once (sampling requests of many episodes run side by side up to this bound).'),
    heartbeatMs: posInt().default(10_000).describe('Session heartbeat period (servers unload the models of a silent session).'),
  })
  .strict();

/** A parsed `model.tinker` section. */
export type TinkerSettings = z.output<typeof tinkerSchema>;

/** The `model.engine` field. */
export const engineSchema = z
  .enum(['local', 'tinker'])
  .default('local')
  .describe(
    "Where the model work runs: local (turnwise's own tfjs model in this process) or tinker (a server speaking the Tinker training API: hosted Tinker, SkyRL tx, `turnwise tinker serve`; needs model.from for the tokenizer and chat template, model.lora for the rank, and model.tinker).",
  );
