/**
 * OpenAI-style error bodies: `{"error":{"message","type","param","code"}}` with the HTTP status
 * OpenAI uses for the same mistake, so OpenAI clients raise their usual error classes
 * (`BadRequestError`, `NotFoundError`, …) with a readable message.
 */

/** The `type` field values OpenAI uses. */
export type OpenAIErrorType = 'invalid_request_error' | 'not_found_error' | 'server_error';

/** An error the server answers with. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 404 | 405 | 413 | 500,
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
