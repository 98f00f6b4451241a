/**
 * The wire format between the main thread and an environment worker: one `ArrayBuffer` per batch
 * in each direction, transferred (not cloned) with the message.
 *
 * Why one buffer of joined text: a batch holds thousands of steps, and decoding each string on its
 * own would cost one `TextDecoder` call per field. Instead every string of a batch is concatenated
 * into one JS string, encoded to UTF-8 once, decoded once on the other side and cut back into
 * fields with a table of UTF-16 offsets.
 *
 * Layout (little-endian, 8-byte aligned sections):
 * `[u32 count, u32 fields, u32 textBytes, u32 pad] [f64 numbers: count * NUMS] [u32 offsets: fields + 1] [u8 utf-8 text]`
 */

/** Operations a worker performs on one of its environment slots. */
export const OP = { reset: 0, step: 1, close: 2 } as const;
export type OpKind = (typeof OP)[keyof typeof OP];

/** One request of a batch. */
export interface EnvOp {
  readonly kind: OpKind;
  readonly slot: number;
  /** Task index for `reset`, else 0. */
  readonly taskIndex: number;
  /** Action text for `step`, else ''. */
  readonly text: string;
}

/** How one op ended. */
export const STATUS = { ok: 0, error: 1 } as const;

/** One answer of a batch: an observation (reset), a step result (step), nothing (close), or an error message. */
export interface EnvReply {
  readonly status: (typeof STATUS)[keyof typeof STATUS];
  readonly text: string;
  /** `availableActions`, or null when the environment listed none. */
  readonly actions: readonly string[] | null;
  readonly reward: number;
  readonly done: boolean;
  /** `success` of the step result, or undefined when the environment did not say. */
  readonly success: boolean | undefined;
  /** JSON of `info`, or '' when absent. */
  readonly infoJson: string;
  /** Error message when `status` is error, else ''. */
  readonly error: string;
}

const HEADER_BYTES = 16;
const REQUEST_NUMS = 3; // kind, slot, taskIndex
const REPLY_NUMS = 6; // status, reward, done, success (-1 unknown), hasActions, actionCount
// Strings per reply: text, each action, infoJson, error.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function align8(n: number): number {
  return (n + 7) & ~7;
}

function pack(count: number, nums: Float64Array, fields: readonly string[]): ArrayBuffer {
  const joined = fields.join('');
  const offsets = new Uint32Array(fields.length + 1);
  let at = 0;
  for (let i = 0; i < fields.length; i++) {
    offsets[i] = at;
    at += (fields[i] as string).length;
  }
  offsets[fields.length] = at;
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  const maxText = joined.length * 3;
  const numsAt = HEADER_BYTES;
  const offsetsAt = numsAt + nums.byteLength;
  const textAt = align8(offsetsAt + offsets.byteLength);
  const buffer = new ArrayBuffer(textAt + maxText);
  const text = new Uint8Array(buffer, textAt, maxText);
  const { written } = encoder.encodeInto(joined, text);
  new Uint32Array(buffer, 0, 4).set([count, fields.length, written, 0]);
  new Float64Array(buffer, numsAt, nums.length).set(nums);
  new Uint32Array(buffer, offsetsAt, offsets.length).set(offsets);
  // Trim the slack: the transfer moves the whole buffer, so keep it tight.
  return buffer.slice(0, textAt + written);
}

function unpack(buffer: ArrayBuffer, numsPerItem: number): { count: number; nums: Float64Array; field: (i: number) => string } {
  const [count, fieldCount, textBytes] = new Uint32Array(buffer, 0, 3) as unknown as [number, number, number];
  const nums = new Float64Array(buffer, HEADER_BYTES, count * numsPerItem);
  const offsetsAt = HEADER_BYTES + nums.byteLength;
  const offsets = new Uint32Array(buffer, offsetsAt, fieldCount + 1);
  const joined = decoder.decode(new Uint8Array(buffer, align8(offsetsAt + offsets.byteLength), textBytes));
  return { count, nums, field: (i) => joined.slice(offsets[i], offsets[i + 1]) };
}

/**
 * Packs a batch of requests into one transferable buffer.
 * @example const buffer = encodeOps([{ kind: OP.reset, slot: 0, taskIndex: 12, text: '' }]);
 */
export function encodeOps(ops: readonly EnvOp[]): ArrayBuffer {
  const nums = new Float64Array(ops.length * REQUEST_NUMS);
  const fields: string[] = new Array(ops.length);
  ops.forEach((op, i) => {
    nums[i * REQUEST_NUMS] = op.kind;
    nums[i * REQUEST_NUMS + 1] = op.slot;
    nums[i * REQUEST_NUMS + 2] = op.taskIndex;
    fields[i] = op.text;
  });
  return pack(ops.length, nums, fields);
}

/**
 * Unpacks what {@link encodeOps} wrote.
 * @example decodeOps(encodeOps(ops)) // equal to ops
 */
export function decodeOps(buffer: ArrayBuffer): EnvOp[] {
  const { count, nums, field } = unpack(buffer, REQUEST_NUMS);
  const ops: EnvOp[] = new Array(count);
  for (let i = 0; i < count; i++) {
    ops[i] = { kind: nums[i * REQUEST_NUMS] as OpKind, slot: nums[i * REQUEST_NUMS + 1] as number, taskIndex: nums[i * REQUEST_NUMS + 2] as number, text: field(i) };
  }
  return ops;
}

/**
 * Packs a batch of replies (same order as the ops) into one transferable buffer.
 * @example const buffer = encodeReplies([{ status: STATUS.ok, text: 'a wall', actions: ['turn left'], reward: 0, done: false, success: undefined, infoJson: '', error: '' }]);
 */
export function encodeReplies(replies: readonly EnvReply[]): ArrayBuffer {
  const nums = new Float64Array(replies.length * REPLY_NUMS);
  const fields: string[] = [];
  replies.forEach((r, i) => {
    const at = i * REPLY_NUMS;
    nums[at] = r.status;
    nums[at + 1] = r.reward;
    nums[at + 2] = r.done ? 1 : 0;
    nums[at + 3] = r.success === undefined ? -1 : r.success ? 1 : 0;
    nums[at + 4] = r.actions === null ? 0 : 1;
    nums[at + 5] = r.actions?.length ?? 0;
    fields.push(r.text);
    if (r.actions !== null) for (const a of r.actions) fields.push(a);
    fields.push(r.infoJson, r.error);
  });
  return pack(replies.length, nums, fields);
}

/**
 * Unpacks what {@link encodeReplies} wrote.
 * @example const [reply] = decodeReplies(buffer); reply.text
 */
export function decodeReplies(buffer: ArrayBuffer): EnvReply[] {
  const { count, nums, field } = unpack(buffer, REPLY_NUMS);
  const replies: EnvReply[] = new Array(count);
  let f = 0;
  for (let i = 0; i < count; i++) {
    const at = i * REPLY_NUMS;
    const text = field(f++);
    let actions: string[] | null = null;
    if (nums[at + 4] === 1) {
      const n = nums[at + 5] as number;
      actions = new Array(n);
      for (let k = 0; k < n; k++) actions[k] = field(f++);
    }
    const success = nums[at + 3] === -1 ? undefined : nums[at + 3] === 1;
    replies[i] = {
      status: nums[at] === STATUS.error ? STATUS.error : STATUS.ok,
      text,
      actions,
      reward: nums[at + 1] as number,
      done: nums[at + 2] === 1,
      success,
      infoJson: field(f++),
      error: field(f++),
    };
  }
  return replies;
}
