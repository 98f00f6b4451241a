/**
 * The tokenizer side of a Hugging Face model folder: `tokenizer.json`, `tokenizer_config.json`
 * (special-token strings, `added_tokens_decoder`, `chat_template`), `chat_template.jinja`,
 * `generation_config.json` and `config.json` (bos/eos/pad ids).
 *
 * Rules, as transformers applies them:
 * - the chat template is `chat_template.jinja` when the folder has one, else
 *   `tokenizer_config.json:chat_template`: a string, or a list of `{name, template}` (the one named
 *   `templateName`, default `default`);
 * - special-token strings may be written as strings or as `{ "content": … }` objects; each must be a
 *   token of `tokenizer.json`, and `added_tokens_decoder` must agree with its `added_tokens`;
 * - generation stops at every id any file calls end-of-sequence: `generation_config.json:eos_token_id`
 *   and `config.json:eos_token_id` (an integer or a list), and the tokenizer's `eos_token`;
 * - bos and pad ids: `generation_config.json`, else `config.json`, else the tokenizer's token; two
 *   files that give different ids are an error.
 * Every problem is a {@link ModelFilesError} naming `<file>:<field>`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nonRegularKind } from '../../core/file-kind.js';
import { HfTokenizer } from '../tokenizer/hf-tokenizer.js';
import { ModelFilesError } from './errors.js';
import { ChatTemplate, TEMPLATE_SPECIAL_TOKENS, type TemplateSpecialToken } from './template.js';

/** The files' contents, parsed (what {@link loadChatModelFiles} reads from a folder). */
export interface ChatModelFileContents {
  readonly tokenizerJson: unknown;
  readonly tokenizerConfig?: unknown;
  readonly chatTemplateJinja?: string;
  readonly generationConfig?: unknown;
  readonly config?: unknown;
}

/** Options of {@link parseChatModelFiles}. */
export interface ChatModelFilesOptions {
  /** Which named template of a list-form `chat_template`. Default `default`. */
  readonly templateName?: string;
  /** Clock of the template's `strftime_now`. */
  readonly now?: () => Date;
  /** Folder name for error messages. */
  readonly folder?: string;
}

/** The tokenizer side of a model, checked. */
export interface ChatModelFiles {
  readonly tokenizer: HfTokenizer;
  /** The chat template, or undefined when the folder has none (a base model). */
  readonly template: ChatTemplate | undefined;
  /** Special-token strings of tokenizer_config.json (only those set). */
  readonly specialTokens: Readonly<Partial<Record<TemplateSpecialToken, string>>>;
  readonly bosTokenId: number | undefined;
  readonly padTokenId: number | undefined;
  /** Every id that ends generation, ascending. */
  readonly stopTokenIds: readonly number[];
  /** `tokenizer_config.json:model_max_length`, when set to a real limit. */
  readonly modelMaxLength: number | undefined;
}

/**
 * Checks and combines the parsed files of a model folder.
 * @example const files = parseChatModelFiles({ tokenizerJson, tokenizerConfig, generationConfig, config });
 */
export function parseChatModelFiles(contents: ChatModelFileContents, options: ChatModelFilesOptions = {}): ChatModelFiles {
  const at = (file: string, field?: string): string => `${options.folder === undefined ? '' : `${options.folder}/`}${file}${field === undefined ? '' : `:${field}`}`;
  const tokConfig = objectOrEmpty(contents.tokenizerConfig, at('tokenizer_config.json'));
  const tokenizer = HfTokenizer.fromJSON(contents.tokenizerJson, {
    source: at('tokenizer.json'),
    cleanUpTokenizationSpaces: optionalBoolean(tokConfig.clean_up_tokenization_spaces, at('tokenizer_config.json', 'clean_up_tokenization_spaces')),
  });

  const specialTokens: Partial<Record<TemplateSpecialToken, string>> = {};
  for (const name of TEMPLATE_SPECIAL_TOKENS) {
    const token = tokenString(tokConfig[name], at('tokenizer_config.json', name));
    if (token === undefined) continue;
    if (tokenizer.idOf(token) === undefined) throw new ModelFilesError(at('tokenizer_config.json', name), `'${token}' is not a token of tokenizer.json`);
    specialTokens[name] = token;
  }
  checkAddedTokensDecoder(tokConfig.added_tokens_decoder, tokenizer, at('tokenizer_config.json', 'added_tokens_decoder'));

  const generation = objectOrEmpty(contents.generationConfig, at('generation_config.json'));
  const config = objectOrEmpty(contents.config, at('config.json'));
  const idField = (file: string, json: Record<string, unknown>, field: string): number[] => ids(json[field], at(file, field), tokenizer.vocabSize);
  const single = (field: 'bos_token_id' | 'pad_token_id', token: string | undefined): number | undefined => {
    const fromGeneration = idField('generation_config.json', generation, field);
    const fromConfig = idField('config.json', config, field);
    for (const [list, file] of [[fromGeneration, 'generation_config.json'], [fromConfig, 'config.json']] as const) {
      if (list.length > 1) throw new ModelFilesError(at(file, field), `expected one id, got [${list.join(', ')}]`);
    }
    if (fromGeneration.length > 0 && fromConfig.length > 0 && fromGeneration[0] !== fromConfig[0]) {
      throw new ModelFilesError(at('generation_config.json', field), `${fromGeneration[0]} disagrees with config.json:${field} ${fromConfig[0]}`);
    }
    return fromGeneration[0] ?? fromConfig[0] ?? (token === undefined ? undefined : tokenizer.idOf(token));
  };
  const eosToken = specialTokens.eos_token === undefined ? [] : [tokenizer.idOf(specialTokens.eos_token) as number];
  const stopTokenIds = [...new Set([...idField('generation_config.json', generation, 'eos_token_id'), ...idField('config.json', config, 'eos_token_id'), ...eosToken])].sort((a, b) => a - b);

  const maxLength = tokConfig.model_max_length;
  return {
    tokenizer,
    template: selectTemplate(contents, tokConfig, specialTokens, options, at),
    specialTokens,
    bosTokenId: single('bos_token_id', specialTokens.bos_token),
    padTokenId: single('pad_token_id', specialTokens.pad_token),
    stopTokenIds,
    // transformers writes a huge sentinel (1e30) when a tokenizer has no limit.
    modelMaxLength: typeof maxLength === 'number' && Number.isInteger(maxLength) && maxLength > 0 && maxLength < 2 ** 40 ? maxLength : undefined,
  };
}

/**
 * Reads and checks the tokenizer side of a model folder (only `tokenizer.json` is required).
 * @example const files = await loadChatModelFiles('models/Qwen2.5-0.5B-Instruct');
 */
export async function loadChatModelFiles(folder: string, options: Omit<ChatModelFilesOptions, 'folder'> = {}): Promise<ChatModelFiles> {
  return parseChatModelFiles(await readChatModelFileContents(folder), { ...options, folder });
}

/**
 * The tokenizer-side files of a model folder as parsed JSON (and template text), unchecked: what
 * {@link parseChatModelFiles} checks, and what a checkpoint copies as it is.
 * @example const contents = await readChatModelFileContents('models/Qwen2.5-0.5B-Instruct');
 */
export async function readChatModelFileContents(folder: string): Promise<ChatModelFileContents> {
  const read = async (file: string, required: boolean): Promise<string | undefined> => {
    // Before opening: a FIFO would block the read forever, a directory gives a bare EISDIR.
    const kind = await nonRegularKind(join(folder, file));
    if (typeof kind === 'string') throw new ModelFilesError(join(folder, file), `is ${kind}, not a regular file`);
    try {
      return await readFile(join(folder, file), 'utf8');
    } catch (cause) {
      if (!required && (cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new ModelFilesError(join(folder, file), required ? 'cannot read it (a model folder needs tokenizer.json)' : 'cannot read it', { cause });
    }
  };
  const json = async (file: string, required: boolean): Promise<unknown> => {
    const text = await read(file, required);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new ModelFilesError(join(folder, file), `not valid JSON: ${(cause as Error).message}`, { cause });
    }
  };
  const contents: { -readonly [K in keyof ChatModelFileContents]: ChatModelFileContents[K] } = { tokenizerJson: await json('tokenizer.json', true) };
  const tokenizerConfig = await json('tokenizer_config.json', false);
  const chatTemplateJinja = await read('chat_template.jinja', false);
  const generationConfig = await json('generation_config.json', false);
  const config = await json('config.json', false);
  if (tokenizerConfig !== undefined) contents.tokenizerConfig = tokenizerConfig;
  if (chatTemplateJinja !== undefined) contents.chatTemplateJinja = chatTemplateJinja;
  if (generationConfig !== undefined) contents.generationConfig = generationConfig;
  if (config !== undefined) contents.config = config;
  return contents;
}

function selectTemplate(
  contents: ChatModelFileContents,
  tokConfig: Record<string, unknown>,
  specialTokens: Partial<Record<TemplateSpecialToken, string>>,
  options: ChatModelFilesOptions,
  at: (file: string, field?: string) => string,
): ChatTemplate | undefined {
  const make = (source: string, origin: string): ChatTemplate => new ChatTemplate(source, { specialTokens, origin, now: options.now });
  if (contents.chatTemplateJinja !== undefined) return make(contents.chatTemplateJinja, at('chat_template.jinja'));
  const field = tokConfig.chat_template;
  if (field === undefined || field === null) return undefined;
  if (typeof field === 'string') return make(field, at('tokenizer_config.json', 'chat_template'));
  if (!Array.isArray(field)) throw new ModelFilesError(at('tokenizer_config.json', 'chat_template'), 'expected a string or a list of {name, template}');
  const named = new Map<string, string>();
  field.forEach((entry, i) => {
    const e = entry as { name?: unknown; template?: unknown };
    if (typeof e?.name !== 'string' || typeof e.template !== 'string') throw new ModelFilesError(at('tokenizer_config.json', `chat_template.${i}`), 'expected {name: string, template: string}');
    named.set(e.name, e.template);
  });
  const name = options.templateName ?? 'default';
  const source = named.get(name);
  if (source === undefined) throw new ModelFilesError(at('tokenizer_config.json', 'chat_template'), `no template named '${name}' (has: ${[...named.keys()].join(', ')})`);
  return make(source, at('tokenizer_config.json', `chat_template[${name}]`));
}

function checkAddedTokensDecoder(field: unknown, tokenizer: HfTokenizer, location: string): void {
  if (field === undefined || field === null) return;
  if (typeof field !== 'object' || Array.isArray(field)) throw new ModelFilesError(location, 'expected an object of id → token');
  for (const [key, value] of Object.entries(field)) {
    const id = Number(key);
    const content = (value as { content?: unknown })?.content;
    if (!Number.isInteger(id) || typeof content !== 'string') throw new ModelFilesError(`${location}.${key}`, 'expected "<id>": { "content": string, … }');
    const actual = tokenizer.tokenOf(id);
    if (actual !== content) throw new ModelFilesError(`${location}.${key}`, `says '${content}' but tokenizer.json has ${actual === undefined ? 'no such id' : `'${actual}'`}`);
  }
}

function tokenString(value: unknown, location: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  throw new ModelFilesError(location, 'expected a token string, a {content} object or null');
}

function ids(value: unknown, location: string, vocabSize: number): number[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  for (const id of list) {
    if (!(Number.isInteger(id) && id >= 0 && id < vocabSize)) throw new ModelFilesError(location, `expected token ids in [0, ${vocabSize}) (an integer or a list), got ${JSON.stringify(value)}`);
  }
  return list as number[];
}

function objectOrEmpty(value: unknown, location: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ModelFilesError(location, 'expected a JSON object');
  return value as Record<string, unknown>;
}

function optionalBoolean(value: unknown, location: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ModelFilesError(location, `expected true or false, got ${JSON.stringify(value)}`);
  return value;
}
