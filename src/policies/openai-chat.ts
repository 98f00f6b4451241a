/**
 * A remote policy over the OpenAI-compatible chat-completions API (OpenAI, vLLM, llama.cpp server,
 * Ollama, `turnwise serve`), with the official `openai` client.
 *
 * The conversation is AgentGym's: user: the environment's instruction, assistant: the
 * acknowledgement, then each observation as a user turn and each past reply as an assistant turn
 * (see {@link chatMessages}). The reply text goes to the environment as it is; the environment
 * parses `Thought: … Action: …`. Where the episode acts through tools, they are sent as OpenAI's
 * `tools` (with `tool_choice`), past calls are replayed as `tool_calls` answered by `tool`
 * messages, and the reply's `tool_calls` are handed back; a server that writes a call into the
 * content instead (no tool parser) is read too, as the call's JSON or a `<tool_call>` block. Calls are limited by a semaphore, retried with exponential
 * back-off on 408/409/429/5xx and connection errors (honouring `retry-after`), and their token
 * usage is counted per episode and in total.
 *
 * The API key is read from the environment variable named in the config and never logged; a
 * server without auth (local vLLM, `turnwise serve`) gets a placeholder key.
 */
import OpenAI from 'openai';
import { InvalidArgumentError, TurnwiseError } from '../core/errors.js';
import { ContextLengthExceededError, isContextLengthError } from './context-length.js';
import { DEFAULT_RETRY, type RetryDecision, type RetryEnv, type RetryPolicy, realSleep, retryAfterMs, withRetries } from './retry.js';
import { Semaphore } from './semaphore.js';
import { looksLikeCallJson, parseToolCallText, type ToolCall, type ToolSpec, toolCallOf } from '../core/tools.js';
import { AGENTGYM_ACKNOWLEDGEMENT, chatMessages, type TextActRequest, type TextActResult, type TextPolicy, type TokenUsage } from './text-policy.js';

/** Settings of one remote chat model. */
export interface OpenAIChatConfig {
  /** Label in tables and run folders. */
  readonly name: string;
  /** API root, e.g. `http://localhost:8000/v1`. */
  readonly baseURL: string;
  /** Model id sent with each request. */
  readonly model: string;
  /** Name of the environment variable holding the API key (never the key itself). */
  readonly keyEnv?: string;
  readonly temperature?: number;
  readonly topP?: number;
  /** `max_tokens` per reply. */
  readonly maxTokens?: number;
  /** Requests in flight at once. Default 4. */
  readonly concurrency?: number;
  /** Send the per-turn `seed` (reproducible sampling where the server honours it). Default true. */
  readonly sendSeed?: boolean;
  /** Assistant reply to the instruction (AgentGym's `conversation_start[1]`). */
  readonly acknowledgement?: string;
  /** Per-request timeout of the HTTP client. Default 120 000. */
  readonly timeoutMs?: number;
  /** `tool_choice` sent with tools: `auto` (the model decides) or `required` (it must call one). Default `auto`. */
  readonly toolChoice?: 'auto' | 'required';
  readonly retry?: Partial<RetryPolicy>;
}

/** Injected I/O (tests): the sleep between retries, jitter, the environment variables, `fetch`. */
export interface OpenAIChatDeps {
  readonly sleep?: RetryEnv['sleep'];
  readonly random?: () => number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly fetch?: typeof fetch;
  readonly onRetry?: RetryEnv['onRetry'];
  /** ms since the epoch, for HTTP-date `retry-after` values. Default `Date.now`. */
  readonly nowMs?: () => number;
}

/** Usage totals of a remote policy. */
export interface UsageReport {
  readonly requests: number;
  /** Attempts that failed and were retried. */
  readonly retries: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Requests the server refused as longer than its model's context (those episodes ended by length). */
  readonly contextLengthRefusals: number;
  /** Per episode (trajectory id). */
  readonly perEpisode: Readonly<Record<string, TokenUsage & { readonly requests: number }>>;
}

/** HTTP statuses worth another attempt (as the `openai` client's own retry rule). */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Classifies an error from the `openai` client for {@link withRetries}.
 * @example classifyOpenAIError(new OpenAI.RateLimitError(429, undefined, 'slow down', new Headers())) // { retry: true }
 */
export function classifyOpenAIError(error: unknown, nowMs: number): RetryDecision {
  if (error instanceof OpenAI.APIUserAbortError) return { retry: false };
  if (error instanceof OpenAI.APIConnectionError) return { retry: true };
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    if (!isRetryableStatus(error.status)) return { retry: false };
    const after = retryAfterMs(error.headers, nowMs);
    return after === undefined ? { retry: true } : { retry: true, retryAfterMs: after };
  }
  return { retry: false };
}

/**
 * `fetch` whose error bodies in vLLM's older top-level shape (`{object: "error", message, type,
 * code}`) are rewritten to OpenAI's (`{error: {message, type, param, code}}`), which the `openai`
 * client reads: otherwise a context-length refusal reaches us as "400 status code (no body)".
 */
function withOpenAIErrorBodies(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (response.ok) return response;
    const text = await response.clone().text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return response;
    }
    if (body === null || typeof body !== 'object' || 'error' in body || typeof (body as { message?: unknown }).message !== 'string') return response;
    const { message, type = null, param = null, code = null } = body as { message: string; type?: unknown; param?: unknown; code?: unknown };
    return new Response(JSON.stringify({ error: { message, type, param, code } }), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function check(config: OpenAIChatConfig): void {
  const bad = (field: string, detail: string) => InvalidArgumentError.format(`policies.${config.name}.${field}`, detail);
  if (!/^https?:\/\//.test(config.baseURL)) throw bad('baseURL', `expected an http(s) URL, got ${JSON.stringify(config.baseURL)}`);
  if (config.model.trim() === '') throw bad('model', 'expected a model id');
  if (config.temperature !== undefined && !(config.temperature >= 0 && config.temperature <= 2)) throw bad('temperature', `expected 0..2, got ${config.temperature}`);
  if (config.topP !== undefined && !(config.topP > 0 && config.topP <= 1)) throw bad('topP', `expected (0, 1], got ${config.topP}`);
  if (config.maxTokens !== undefined && !(Number.isInteger(config.maxTokens) && config.maxTokens > 0)) throw bad('maxTokens', `expected a positive integer, got ${config.maxTokens}`);
}

/**
 * @example
 * const policy = new OpenAIChatPolicy({ name: 'qwen', baseURL: 'http://localhost:8000/v1', model: 'Qwen2.5-7B-Instruct', keyEnv: 'VLLM_KEY' });
 * const { text, usage } = await policy.act(request);
 */
export class OpenAIChatPolicy implements TextPolicy {
  private readonly client: OpenAI;
  private readonly gate: Semaphore;
  private readonly retry: RetryPolicy;
  private readonly deps: OpenAIChatDeps;
  private readonly perEpisode = new Map<string, { promptTokens: number; completionTokens: number; requests: number }>();
  private totals = { requests: 0, retries: 0, promptTokens: 0, completionTokens: 0, contextLengthRefusals: 0 };

  constructor(
    readonly config: OpenAIChatConfig,
    deps: OpenAIChatDeps = {},
  ) {
    check(config);
    this.deps = deps;
    const env = deps.env ?? process.env;
    let apiKey = 'unused'; // servers without auth (vLLM, llama.cpp, turnwise serve) ignore it
    if (config.keyEnv !== undefined) {
      const key = env[config.keyEnv];
      if (key === undefined || key === '') {
        throw InvalidArgumentError.format(`policies.${config.name}.keyEnv`, `environment variable ${config.keyEnv} is not set`);
      }
      apiKey = key;
    }
    this.client = new OpenAI({
      baseURL: config.baseURL,
      apiKey,
      maxRetries: 0, // retries are ours (injected sleep, counted attempts)
      timeout: config.timeoutMs ?? 120_000,
      fetch: withOpenAIErrorBodies(deps.fetch ?? fetch),
    });
    this.gate = new Semaphore(config.concurrency ?? 4);
    this.retry = { ...DEFAULT_RETRY, ...config.retry };
  }

  async act(request: TextActRequest, signal?: AbortSignal): Promise<TextActResult> {
    const { config } = this;
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: config.model,
      messages: chatMessages(request, config.acknowledgement ?? AGENTGYM_ACKNOWLEDGEMENT),
      ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      ...(config.topP !== undefined ? { top_p: config.topP } : {}),
      ...(config.maxTokens !== undefined ? { max_tokens: config.maxTokens } : {}),
      ...(config.sendSeed !== false ? { seed: request.seed } : {}),
      // One call a turn is what an episode takes (`toolActionOf`): ask for no more.
      ...(request.tools !== undefined && request.tools.length > 0 ? { tools: openAITools(request.tools), tool_choice: config.toolChoice ?? 'auto', parallel_tool_calls: false } : {}),
    };
    const now = this.deps.nowMs ?? Date.now;
    const completion = await this.gate
      .run(() =>
      withRetries(
        () => this.client.chat.completions.create(body, signal ? { signal } : {}),
        (error) => classifyOpenAIError(error, now()),
        this.retry,
        {
          sleep: this.deps.sleep ?? realSleep,
          ...(this.deps.random ? { random: this.deps.random } : {}),
          onRetry: (info) => {
            this.totals.retries++;
            this.deps.onRetry?.(info);
          },
        },
        signal,
      ),
      )
      .catch((error: unknown) => {
        if (!isContextLengthError(error)) throw error;
        this.totals.contextLengthRefusals++;
        throw new ContextLengthExceededError(config.name, error.message);
      });
    const message = completion.choices[0]?.message;
    const text = message?.content ?? (request.tools !== undefined && message?.tool_calls !== undefined ? '' : undefined);
    if (typeof text !== 'string') {
      throw new TurnwiseError(`policy '${config.name}': the reply of ${config.baseURL} (model ${config.model}) has no choices[0].message.content`);
    }
    const usage: TokenUsage = { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 };
    this.count(request.episodeId, usage);
    if (request.tools === undefined) return { text, usage };
    return { text, usage, ...readToolCalls(message?.tool_calls ?? [], text) };
  }

  private count(episodeId: string, usage: TokenUsage): void {
    const entry = this.perEpisode.get(episodeId) ?? { promptTokens: 0, completionTokens: 0, requests: 0 };
    entry.promptTokens += usage.promptTokens;
    entry.completionTokens += usage.completionTokens;
    entry.requests++;
    this.perEpisode.set(episodeId, entry);
    this.totals.requests++;
    this.totals.promptTokens += usage.promptTokens;
    this.totals.completionTokens += usage.completionTokens;
  }

  /** Requests, retries and tokens so far, in total and per episode. */
  usage(): UsageReport {
    return { ...this.totals, perEpisode: Object.fromEntries([...this.perEpisode].map(([k, v]) => [k, { ...v }])) };
  }
}

/** Tools in OpenAI's request shape. */
function openAITools(tools: readonly ToolSpec[]): OpenAI.Chat.ChatCompletionTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters as unknown as Record<string, unknown> } }));
}

const CONTENT_CALL = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

/**
 * The calls of a reply: its `tool_calls` (arguments parsed from their JSON string), else calls the
 * server left in the content (a call's JSON, or `<tool_call>` blocks) when it has no tool parser.
 */
function readToolCalls(toolCalls: readonly OpenAI.Chat.ChatCompletionMessageToolCall[], content: string): { toolCalls: ToolCall[]; toolCallError?: string } {
  const calls: ToolCall[] = [];
  for (const call of toolCalls) {
    if (call.type !== 'function') continue;
    const parsed = toolCallOf({ name: call.function.name, arguments: call.function.arguments });
    if (!parsed.ok) return { toolCalls: calls, toolCallError: parsed.message };
    calls.push(parsed.call);
  }
  if (calls.length > 0) return { toolCalls: calls };
  if (looksLikeCallJson(content)) {
    const parsed = parseToolCallText(content);
    return parsed.ok ? { toolCalls: [parsed.call] } : { toolCalls: [], toolCallError: parsed.message };
  }
  for (const block of content.matchAll(CONTENT_CALL)) {
    const parsed = parseToolCallText(block[1] ?? '');
    if (!parsed.ok) return { toolCalls: calls, toolCallError: parsed.message };
    calls.push(parsed.call);
  }
  return { toolCalls: calls };
}
