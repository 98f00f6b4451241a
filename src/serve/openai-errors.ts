/**
 * OpenAI-style error bodies: `{"error":{"message","type","param","code"}}` with the HTTP status
 * OpenAI uses for the same mistake, so OpenAI clients raise their usual error classes
 * (`BadRequestError`, `NotFoundError`, …) with a readable message.
 */

/** The `type` field values OpenAI uses. */
export type OpenAIErrorType = 'invalid_request_error' | 'not_found_error' | 'server_error' | 'requests';

/** An error the server answers with. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 404 | 405 | 413 | 429 | 500,
    message: string,
    readonly type: OpenAIErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The JSON body. */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  /**
   * A 400 about one request parameter.
   * @example throw ApiError.invalid('temperature', 'temperature must be between 0 and 2', 'invalid_value')
   */
  static invalid(param: string | null, message: string, code: string | null = null): ApiError {
    return new ApiError(400, message, 'invalid_request_error', param, code);
  }
}

/**
 * OpenAI's `context_length_exceeded` for chat: the messages alone (`completionTokens` null), or
 * messages plus the requested completion, are more than the model's context.
 * @example chatContextError(2048, 2100, null).message // "This model's maximum context length is 2048 tokens. However, your messages resulted in 2100 tokens. …"
 */
export function chatContextError(maxContext: number, promptTokens: number, completionTokens: number | null): ApiError {
  const message =
    completionTokens === null
      ? `This model's maximum context length is ${maxContext} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`
      : `This model's maximum context length is ${maxContext} tokens. However, you requested ${promptTokens + completionTokens} tokens (${promptTokens} in the messages, ${completionTokens} in the completion). Please reduce the length of the messages or completion.`;
  return ApiError.invalid('messages', message, 'context_length_exceeded');
}

/**
 * OpenAI's `context_length_exceeded` for the legacy completions: prompt plus completion too long.
 * @example completionContextError(2048, 2000, 100).param // 'prompt'
 */
export function completionContextError(maxContext: number, promptTokens: number, completionTokens: number): ApiError {
  return ApiError.invalid(
    'prompt',
    `This model's maximum context length is ${maxContext} tokens, however you requested ${promptTokens + completionTokens} tokens (${promptTokens} in your prompt; ${completionTokens} for the completion). Please reduce your prompt; or completion length.`,
    'context_length_exceeded',
  );
}
