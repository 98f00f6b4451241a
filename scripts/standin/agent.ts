/**
 * Builds a stand-in for a pretrained instruct model, for tests and demos on a machine that cannot
 * download one: a tiny Llama-family model in Hugging Face layout (config.json, model.safetensors,
 * ChatML tokenizer.json / tokenizer_config.json / generation_config.json) that was pretrained by
 * next-token prediction on chat transcripts of *random* play. It knows AgentGym's reply format
 * (`Thought: … Action: <a listed action>`) and the environment's action vocabulary, but not the
 * task: the start a GRPO run from `model.from` improves on. Deterministic in the seed.
 *
 * The conversation it is trained on is laid out by the runtime's own chat text (the same system
 * message, acknowledgement and history as the run that will load it), so it reads at run time
 * exactly what it was trained on.
 *
 * With `actions: 'tools'` it is a tool-calling instruct model instead: its chat template takes tools
 * (ChatML with Qwen2.5's `<tool_call>` format), and it is pretrained on random *valid calls* of the
 * environment's declared tools, laid out as tool contexts (results as tool messages): it knows how
 * to call the tools but not which call solves the task.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import '../../src/envs/index.js';
import { Rng } from '../../src/core/rng.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { type ChatMessage, ChatTemplate, templateTools } from '../../src/models/chat/template.js';
import { toolCallMessage, toolResultMessage } from '../../src/models/chat/tool-chat.js';
import { headMessages } from '../../src/models/chat/layout.js';
import { writeHfConfig } from '../../src/models/hf/hf-config.js';
import { type ChatTextOptions, chatText } from '../../src/models/policy-text.js';
import { writeSafetensors } from '../../src/models/safetensors.js';
import { CHATML_IDS, CHATML_ROLE_WORDS, CHATML_TOOLS_TEMPLATE, chatmlFiles } from './chatml-files.js';
import { trainNextToken } from './next-token.js';
import { randomToolTranscripts, randomTranscripts, type Transcript, transcriptSequences } from './transcripts.js';
import { trainBpe } from '../../src/models/tokenizer/train.js';
import type { ToolSpec } from '../../src/core/tools.js';
import { toolCallId } from '../../src/core/tools.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';

/** The model's shape apart from the vocabulary (which the tokenizer sets). */
export type StandinShape = Omit<TransformerConfig, 'vocabSize'>;

/** A small Llama with grouped-query attention: about 0.26M parameters; an epoch over 400 BabyAI episodes takes about 12 s on 2 cores. */
export const DEFAULT_STANDIN_SHAPE: StandinShape = {
  architecture: 'llama',
  dModel: 96,
  nLayers: 2,
  nHeads: 4,
  nKvHeads: 2,
  ffnHidden: 256,
  maxContext: 1024,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieEmbeddings: true,
};

/** What {@link buildStandinAgent} makes. */
export interface StandinOptions {
  /** Folder to write (created). */
  readonly folder: string;
  readonly seed: number;
  /** Environment and its settings, as in a run config (`env.name`, `env.settings`). */
  readonly env: { readonly name: string; readonly settings?: Readonly<Record<string, unknown>> };
  /** `text` (default): AgentGym's Thought/Action replies over listed actions; `tools`: random valid calls of the environment's tools. */
  readonly actions?: 'text' | 'tools';
  /** The conversation layout of the runs that will load it (their `context.chat`, history, limits). */
  readonly chat: ChatTextOptions;
  /** Random episodes of the train split to pretrain on. */
  readonly episodes: number;
  /** Turns per episode at most (the run's horizon). */
  readonly turns: number;
  readonly vocabSize?: number;
  readonly shape?: StandinShape;
  readonly epochs?: number;
  readonly batchTokens?: number;
  readonly lr?: number;
  readonly onStep?: (step: number, steps: number, loss: number) => void;
}

/** What was built. */
export interface StandinReport {
  readonly folder: string;
  readonly parameters: number;
  readonly vocabSize: number;
  /** Random episodes played. */
  readonly episodes: number;
  /** Share of the random episodes that succeeded (what random play scores). */
  readonly randomSuccessRate: number;
  /** Training sequences they made (one per episode with the full history, one per turn without). */
  readonly sequences: number;
  readonly trainedTokens: number;
  /** Mean next-token loss of each epoch (nats per reply token). */
  readonly epochLosses: readonly number[];
}

/**
 * Writes the stand-in model folder (module comment) and says what it holds.
 * @example const report = await buildStandinAgent({ folder: 'models/standin', seed: 1, env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } }, chat, episodes: 600, turns: 5 });
 */
export async function buildStandinAgent(options: StandinOptions): Promise<StandinReport> {
  const root = Rng.fromSeed(options.seed).fork('standin');
  const spec = getEnvironmentSpec(options.env.name);
  const envOptions = options.env.settings === undefined ? {} : { settings: options.env.settings };
  const tasks = root.fork('tasks').shuffle([...spec.catalog(envOptions).indices('train')]).slice(0, options.episodes);
  const env = spec.create(envOptions);
  const withTools = options.actions === 'tools';
  let transcripts: Transcript[];
  let tools: readonly ToolSpec[] = [];
  try {
    const play = { episodes: options.episodes, turns: options.turns };
    tools = env.tools?.() ?? [];
    if (withTools && tools.length === 0) throw InvalidArgumentError.format('actions', `'tools' needs an environment that declares tools; ${spec.name} declares none`);
    transcripts = withTools ? randomToolTranscripts(env, tasks, play, root.fork('play')) : randomTranscripts(env, tasks, play, root.fork('play'));
  } finally {
    await env.close();
  }

  // The tokenizer: byte-level BPE on everything the conversation shows, dressed as ChatML.
  const corpus = [...CHATML_ROLE_WORDS, options.chat.system ?? '', options.chat.acknowledge ?? ''];
  corpus.push(transcripts[0]?.instruction ?? '');
  for (const t of transcripts) for (const turn of t.turns) corpus.push(turn.observationText, turn.reply);
  // With tools, the text of the tool prompt and of calls and results as the template writes them.
  if (withTools) for (const t of transcripts) corpus.push(renderedToolConversation(t, tools, options.chat));
  const bpe = trainBpe(corpus, { vocabSize: options.vocabSize ?? 768 });
  const shape: TransformerConfig = { ...(options.shape ?? DEFAULT_STANDIN_SHAPE), vocabSize: bpe.vocabSize };
  const files = chatmlFiles(bpe, { modelMaxLength: shape.maxContext, maxNewTokens: 64, tools: withTools });
  const text = chatText({ tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig, generationConfig: files.generationConfig }, options.chat, options.folder);
  const toolText = withTools ? text.toolText(tools) : null;
  if (toolText !== null && !toolText.ok) throw InvalidArgumentError.format('actions', `the stand-in's template cannot take the tools: ${toolText.reason}`);

  // Next-token training on the replies of the random conversations.
  const maxTokens = Math.min(shape.maxContext, options.chat.maxContext);
  const sequences = transcripts.flatMap((t) => transcriptSequences(text, t, maxTokens, toolText?.ok === true ? toolText.text : null));
  const model = new TransformerModel(shape, root.fork('init'));
  try {
    const epochLosses = trainNextToken(
      model,
      sequences,
      { epochs: options.epochs ?? 4, batchTokens: options.batchTokens ?? 2048, lr: options.lr ?? 3e-3, ...(options.onStep ? { onStep: options.onStep } : {}) },
      root.fork('sft'),
    );
    mkdirSync(options.folder, { recursive: true });
    const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
    writeFileSync(join(options.folder, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
    writeFileSync(join(options.folder, 'tokenizer_config.json'), json(files.tokenizerConfig));
    writeFileSync(join(options.folder, 'generation_config.json'), json(files.generationConfig));
    writeFileSync(join(options.folder, 'config.json'), json(writeHfConfig(shape, { bos: null, eos: [CHATML_IDS.imEnd], pad: CHATML_IDS.pad })));
    const records: Parameters<typeof writeSafetensors>[1] = {};
    let parameters = 0;
    for (const [name, w] of model.namedWeights()) {
      records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
      parameters += w.data.length;
    }
    await writeSafetensors(join(options.folder, 'model.safetensors'), records, { format: 'pt' });
    return {
      folder: options.folder,
      parameters,
      vocabSize: bpe.vocabSize,
      episodes: transcripts.length,
      randomSuccessRate: transcripts.filter((t) => t.success).length / Math.max(1, transcripts.length),
      sequences: sequences.length,
      trainedTokens: sequences.reduce((n, s) => n + s.targets.length, 0),
      epochLosses,
    };
  } finally {
    model.dispose();
  }
}

/** A tool transcript rendered by the stand-in's template (for the tokenizer's corpus). */
function renderedToolConversation(transcript: Transcript, tools: readonly ToolSpec[], chat: ChatTextOptions): string {
  const first = transcript.turns[0]?.observationText ?? '';
  const messages: ChatMessage[] = headMessages({ system: chat.system, acknowledgement: chat.acknowledge }, transcript.instruction, first);
  transcript.turns.forEach((turn, k) => {
    if (turn.call === undefined) return;
    const call = { ...turn.call, id: toolCallId(k) };
    messages.push(toolCallMessage([call]));
    const next = transcript.turns[k + 1]?.observationText;
    if (next !== undefined) messages.push(toolResultMessage(call, next));
  });
  return new ChatTemplate(CHATML_TOOLS_TEMPLATE).render(messages, { tools: templateTools(tools) });
}
