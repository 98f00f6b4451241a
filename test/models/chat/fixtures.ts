/**
 * Test helpers: the Hugging Face model folders in ./fixtures (made by
 * scripts/hf-fixtures/make-fixtures.sh) and the reference answers recorded with them.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatMessage } from '../../../src/models/chat/template.js';

/** Folder of the fixture model folders. */
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Every fixture family, tokenizer-only ones included. */
export const FAMILIES = ['gpt2', 'qwen2.5', 'qwen3', 'smollm2', 'llama3', 'llama2', 'metaspace-split', 'mistral'] as const;
/** The families whose folder has a chat template. */
export const CHAT_FAMILIES = ['qwen2.5', 'qwen3', 'smollm2', 'llama3', 'llama2', 'mistral'] as const;
export type Family = (typeof FAMILIES)[number];

export type Message = ChatMessage;

export interface Reference {
  readonly family: string;
  readonly vocab_size: number;
  readonly special_tokens_map: Record<string, string>;
  /** ids: the Rust `tokenizers` answer; transformers_ids only where transformers 5 differs. */
  readonly encode: { text: string; ids: number[]; transformers_ids?: number[]; decoded: string; decoded_skip_special: string }[];
  readonly decode_only: { ids: number[]; decoded: string }[];
  readonly chats?: {
    name: string;
    system: string | null;
    ack: string | null;
    messages: Message[];
    renders: { messages: number; add_generation_prompt: boolean; text: string; ids: number[] }[];
  }[];
  readonly no_thinking?: { messages: Message[]; text: string };
  readonly alternation_error?: string | null;
}

/** The families whose template takes tools (their folder has `tool-reference.json`). */
export const TOOL_FAMILIES = ['qwen2.5', 'qwen3', 'llama3', 'mistral'] as const;
export type ToolFamily = (typeof TOOL_FAMILIES)[number];

/** A tool conversation recorded with transformers: `apply_chat_template(messages[:n], tools=tools)` at every turn. */
export interface ToolChat {
  readonly name: string;
  readonly system: string | null;
  readonly ack: string | null;
  readonly tools: { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  readonly messages: Message[];
  readonly renders: { messages: number; add_generation_prompt: boolean; text: string; ids: number[] }[];
}

/** The family's tool-reference.json conversations. */
export function toolChats(family: ToolFamily): ToolChat[] {
  return readFixtureJson<{ tool_chats: ToolChat[] }>(family, 'tool-reference.json').tool_chats;
}

/** Folder of one family. */
export function fixtureDir(family: Family): string {
  return join(FIXTURES, family);
}

/** A JSON file of a family's folder, parsed. */
export function readFixtureJson<T = unknown>(family: Family, file: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, family, file), 'utf8')) as T;
}

/** The family's reference.json. */
export function reference(family: Family): Reference {
  return readFixtureJson<Reference>(family, 'reference.json');
}
