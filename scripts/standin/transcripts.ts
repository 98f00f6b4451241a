/**
 * Transcripts of random play for the stand-in "pretrained" agent: episodes of an environment where
 * every reply is in the format AgentGym's instruction asks for
 * (`Thought:\n<short text>\n\nAction:\n<a listed action>`) but the action is drawn uniformly among
 * the listed ones and the thought is a generic phrase — an agent that knows the format and the
 * action vocabulary but not the task. Each episode becomes chat token sequences laid out exactly as
 * the runtime lays out a conversation (the same {@link PolicyText}), with the positions whose next
 * token is a reply token (the loss positions of next-token training: replies only, as instruct
 * fine-tuning trains). Tool transcripts (`randomToolTranscripts`) do the same with tools: each reply
 * is one valid call drawn at random from the declared tools (arguments uniform over their `enum`, or
 * over the listed actions for a free string), laid out as the model's tool-call format.
 */
import type { Rng } from '../../src/core/rng.js';
import { type ToolCall, type ToolSpec, toolCallText } from '../../src/core/tools.js';
import type { Observation } from '../../src/core/types.js';
import type { Environment } from '../../src/envs/environment.js';
import type { PastTurn } from '../../src/models/context.js';
import type { PolicyText, ToolText } from '../../src/models/policy-text.js';

/** Generic thoughts: they say nothing about the task, so they carry no skill. */
export const RANDOM_THOUGHTS = ['Let me try this.', 'I will explore.', 'I should look around.', 'Maybe this helps.', 'I will take a step.', 'Let me see what happens.'] as const;

/** One turn of a random episode. */
export interface TranscriptTurn {
  readonly observationText: string;
  /** The reply text the agent gave (`Thought:\n…\n\nAction:\n…`; a call's canonical text in tool transcripts). */
  readonly reply: string;
  /** The call the reply makes (tool transcripts). */
  readonly call?: ToolCall;
}

/** A random episode: the instruction and its turns. */
export interface Transcript {
  readonly instruction: string;
  readonly turns: readonly TranscriptTurn[];
  readonly success: boolean;
}

/**
 * A random reply in AgentGym's format.
 * @example randomReply(rng, ['turn left', 'move forward']) // 'Thought:\nI will explore.\n\nAction:\nmove forward'
 */
export function randomReply(rng: Rng, actions: readonly string[]): string {
  return `Thought:\n${rng.pick(RANDOM_THOUGHTS)}\n\nAction:\n${rng.pick(actions)}`;
}

/**
 * A random valid call: a tool drawn uniformly, each required argument uniform over its `enum` (over
 * the `enum` values the observation lists as available actions, when it lists some: the random
 * player of a listed mode), else by type (an integer 0..9, a boolean, a string from the listed
 * actions or `x`).
 * @example randomToolCall(rng, [{ name: 'guess', description: '', parameters: { type: 'object', properties: { word: { type: 'string', enum: ['crane', 'slate'] } }, required: ['word'] } }], observation)
 */
export function randomToolCall(rng: Rng, tools: readonly ToolSpec[], observation: Observation): ToolCall {
  const tool = rng.pick(tools);
  const args: Record<string, unknown> = {};
  for (const name of tool.parameters.required ?? []) {
    const schema = tool.parameters.properties[name] ?? {};
    const listed = schema.enum?.filter((v) => observation.availableActions?.includes(String(v)) === true) ?? [];
    if (listed.length > 0) args[name] = rng.pick(listed);
    else if (schema.enum !== undefined && schema.enum.length > 0) args[name] = rng.pick(schema.enum);
    else if (schema.type === 'integer' || schema.type === 'number') args[name] = rng.int(10);
    else if (schema.type === 'boolean') args[name] = rng.int(2) === 1;
    else args[name] = observation.availableActions !== undefined && observation.availableActions.length > 0 ? rng.pick(observation.availableActions) : 'x';
  }
  return { name: tool.name, arguments: args };
}

/**
 * Random episodes of a synchronous environment (all built-in ones are), at most `turns` turns each;
 * task `e` is `tasks[e % tasks.length]`. Deterministic in `rng`.
 * @example const transcripts = randomTranscripts(env, trainIndices.slice(0, 500), { episodes: 500, turns: 5 }, Rng.fromSeed(1));
 */
export function randomTranscripts(env: Environment, tasks: readonly number[], options: { readonly episodes: number; readonly turns: number }, rng: Rng): Transcript[] {
  return playRandomly(env, tasks, options, (observation) => {
    const actions = observation.availableActions ?? [];
    return actions.length === 0 ? null : { reply: randomReply(rng, actions) };
  });
}

/**
 * Random episodes played through the environment's tools: every reply one random valid call
 * ({@link randomToolCall}), sent as its canonical text. Deterministic in `rng`.
 * @example const transcripts = randomToolTranscripts(env, trainIndices, { episodes: 500, turns: 3 }, Rng.fromSeed(1));
 */
export function randomToolTranscripts(env: Environment, tasks: readonly number[], options: { readonly episodes: number; readonly turns: number }, rng: Rng): Transcript[] {
  const tools = env.tools?.() ?? [];
  if (tools.length === 0) throw new TypeError(`randomToolTranscripts: ${env.name} declares no tools`);
  return playRandomly(env, tasks, options, (observation) => {
    const call = randomToolCall(rng, tools, observation);
    return { reply: toolCallText(call), call };
  });
}

function playRandomly(
  env: Environment,
  tasks: readonly number[],
  options: { readonly episodes: number; readonly turns: number },
  choose: (observation: Observation) => { readonly reply: string; readonly call?: ToolCall } | null,
): Transcript[] {
  const sync = <T>(value: T | Promise<T>, what: string): T => {
    if (value instanceof Promise) throw new TypeError(`randomTranscripts: ${env.name}.${what} must be synchronous`);
    return value;
  };
  const out: Transcript[] = [];
  const instruction = env.instruction();
  for (let e = 0; e < options.episodes && tasks.length > 0; e++) {
    let observation = sync(env.reset(tasks[e % tasks.length] as number), 'reset');
    const turns: TranscriptTurn[] = [];
    let success = false;
    for (let t = 0; t < options.turns; t++) {
      const chosen = choose(observation);
      if (chosen === null) break;
      turns.push({ observationText: observation.text, ...chosen });
      const result = sync(env.step(chosen.reply), 'step');
      observation = result.observation;
      if (result.done) {
        success = result.success === true;
        break;
      }
    }
    if (turns.length > 0) out.push({ instruction, turns, success });
  }
  return out;
}

/** One stretch of a transcript as the model reads it. */
export interface TranscriptSequence {
  /** [tokens] the whole conversation, the last reply included. */
  readonly ids: Int32Array;
  /** Positions p whose next token `ids[p + 1]` is a reply token (the end-of-turn token included). */
  readonly targets: Int32Array;
}

/**
 * The conversation of a transcript as token ids, built turn by turn with the runtime's own context
 * (so a model trained on it reads at run time exactly what it was trained on). While each turn's
 * context extends the previous one (`context.history: full`) the turns chain into one sequence; a
 * context that does not (a history window that dropped a turn) starts a new one. Turns that would
 * pass `maxTokens` are dropped from the end of a chain (its first turn is always kept). With
 * `tools`, contexts are tool contexts and a turn's call is encoded in the model's tool-call format.
 * @example const sequences = transcriptSequences(text, transcript, 1024);
 */
export function transcriptSequences(text: PolicyText, transcript: Transcript, maxTokens: number, tools: ToolText | null = null): TranscriptSequence[] {
  const out: TranscriptSequence[] = [];
  const past: PastTurn[] = [];
  let ids = new Int32Array(0);
  let targets: number[] = [];
  let full = false; // the current chain stopped growing at maxTokens
  const flush = () => {
    if (targets.length > 0) out.push({ ids, targets: Int32Array.from(targets) });
    ids = new Int32Array(0);
    targets = [];
    full = false;
  };
  for (const [k, turn] of transcript.turns.entries()) {
    const input = { instruction: transcript.instruction, pastTurns: past, observationText: turn.observationText };
    const context = tools === null ? text.context(input) : tools.context(input);
    const reply = tools !== null && turn.call !== undefined ? tools.encodeCall(turn.call, k) : (text.actionChoices([turn.reply])[0] as Int32Array);
    past.push({ observationText: turn.observationText, actionTokens: reply });
    const chains = ids.length > 0 && ids.length <= context.length && ids.every((id, i) => context[i] === id);
    if (!chains) flush();
    else if (full || context.length + reply.length > maxTokens) {
      full = true;
      continue;
    }
    const next = new Int32Array(context.length + reply.length);
    next.set(context);
    next.set(reply, context.length);
    for (let k = 0; k < reply.length; k++) targets.push(context.length + k - 1);
    ids = next;
  }
  flush();
  return out;
}
