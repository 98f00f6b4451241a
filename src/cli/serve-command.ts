/**
 * `turnwise serve <model folder | run | checkpoint>`: an OpenAI-compatible server (chat
 * completions, legacy completions with echo + logprobs, vLLM's tokenizer endpoints) for a Hugging
 * Face model folder or a turnwise run, until Ctrl-C or SIGTERM. Registered on the main program by
 * {@link registerServeCommand}.
 */
import type { Command } from 'commander';
import { InvalidArgumentError as CommanderArgumentError } from 'commander';
import type { BackendPreference } from '../models/backend/select.js';
import { serveModel } from '../serve/server.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CommanderArgumentError(`expected a positive integer, got '${value}'`);
  return n;
}

const BACKENDS: readonly BackendPreference[] = ['auto', 'tensorflow', 'wasm', 'cpu'];

/** The command's options. */
export interface ServeCommandOptions {
  readonly port: number;
  readonly host: string;
  readonly modelName?: string;
  readonly maxBodyBytes?: number;
  readonly maxContext?: number;
  readonly backend?: BackendPreference;
  readonly seed?: number;
}

/**
 * Starts the server, prints how to reach it, and stops on Ctrl-C / SIGTERM.
 * @example await serveCommand('models/SmolLM2-135M-Instruct', { port: 8000, host: '127.0.0.1' });
 */
export async function serveCommand(location: string, options: ServeCommandOptions): Promise<void> {
  const server = await serveModel(location, options);
  console.log(`serving ${server.description}`);
  for (const note of server.notes) console.log(`  ${note}`);
  const root = server.baseURL.slice(0, -'/v1'.length);
  console.log(`model '${server.modelId}' at ${server.baseURL} (POST /chat/completions, /completions; GET /models), tokenizer at ${root}/tokenize; Ctrl-C stops`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
}

/**
 * Adds `serve` to the CLI.
 * @example registerServeCommand(program);
 */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve a Hugging Face model folder, a run or a checkpoint through an OpenAI-compatible API (/v1/chat/completions, /v1/completions)')
    .argument('<location>', 'Hugging Face model folder (config.json + safetensors + tokenizer), PEFT adapter folder, run folder (its latest checkpoint) or checkpoint folder')
    .option('--port <n>', 'port (0 = a free one)', (v: string) => (v === '0' ? 0 : positiveInt(v)), 8000)
    .option('--host <host>', 'interface to bind (0.0.0.0 exposes it)', '127.0.0.1')
    .option('--model-name <id>', "model id clients send (default: the folder's or run's name)")
    .option('--max-context <n>', "cap on prompt + completion tokens (default: the model's context)", positiveInt)
    .option('--backend <name>', `tensor backend: ${BACKENDS.join(', ')} (default: a run's own, else auto)`, (v: string) => {
      if (!BACKENDS.includes(v as BackendPreference)) throw new CommanderArgumentError(`expected one of ${BACKENDS.join(', ')}, got '${v}'`);
      return v as BackendPreference;
    })
    .option('--seed <n>', 'seed of the stream for requests that send no seed', (v: string) => (v === '0' ? 0 : positiveInt(v)))
    .option('--max-body-bytes <n>', 'largest request body (413 beyond)', positiveInt)
    .action(async (location: string, opts: ServeCommandOptions) => {
      await serveCommand(location, opts);
    });
}
