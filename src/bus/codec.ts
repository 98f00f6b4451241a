/**
 * The one codec for bus payloads and weights: msgpackr with `moreTypes`, so that typed arrays come
 * back as the same class (by default a `Float32Array` would come back as a `Buffer`;
 * `test/bus/codec.test.ts` pins the round trip).
 *
 * msgpackr silently turns a class instance into a plain object and drops functions, so
 * {@link encode} first walks the value with {@link assertSerializable}, which names the path of
 * the first bad field. The walk does not descend into typed arrays, so a trajectory costs one visit
 * per turn field, not per token.
 */
import { Packr } from 'msgpackr';
import { InvalidMessageError } from '../core/errors.js';

// useRecords (msgpackr's default) writes each object shape once per message, inline, so a decoder in
// another process needs no shared structures.
const packr = new Packr({ moreTypes: true });

const objectProto = Object.prototype;

function describeBad(value: unknown): string | null {
  switch (typeof value) {
    case 'function':
      return 'a function cannot be serialized';
    case 'symbol':
      return 'a symbol cannot be serialized';
    default:
      return null;
  }
}

function className(value: object): string {
  const ctor = (value as { constructor?: { name?: unknown } }).constructor;
  return typeof ctor?.name === 'string' && ctor.name.length > 0 ? ctor.name : 'an object with a custom prototype';
}

function joinKey(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function walk(value: unknown, path: string, ancestors: Set<object>, subject: string): void {
  if (value === null || typeof value !== 'object') {
    const bad = describeBad(value);
    if (bad !== null) throw new InvalidMessageError(subject, `at '${path}': ${bad}`);
    return;
  }
  if (ArrayBuffer.isView(value)) {
    if (value instanceof DataView) throw new InvalidMessageError(subject, `at '${path}': a DataView cannot be serialized; send a typed array`);
    return; // typed arrays (and Buffer) round-trip as their own class
  }
  if (value instanceof Date) return;
  if (ancestors.has(value)) throw new InvalidMessageError(subject, `at '${path}': circular reference`);
  ancestors.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(value[i], `${path}[${i}]`, ancestors, subject);
  } else if (value instanceof Map) {
    let i = 0;
    for (const [key, item] of value) {
      walk(key, `${path}<key ${i}>`, ancestors, subject);
      walk(item, `${path}<value ${i}>`, ancestors, subject);
      i++;
    }
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== objectProto && proto !== null) {
      throw new InvalidMessageError(
        subject,
        `at '${path}': ${className(value)} instance cannot be serialized (only plain objects, arrays, typed arrays, Date and Map)`,
      );
    }
    for (const key in value) {
      walk((value as Record<string, unknown>)[key], joinKey(path, key), ancestors, subject);
    }
  }
  ancestors.delete(value);
}

/**
 * Throws `InvalidMessageError` naming the path of the first field msgpackr would not round-trip:
 * a function, symbol, class instance (other than typed arrays, Date, Map), DataView or a cycle.
 * @example
 * assertSerializable({ turns: [{ f: () => 1 }] });
 * // InvalidMessageError: invalid message on '(codec)': at 'payload.turns[0].f': a function cannot be serialized
 */
export function assertSerializable(value: unknown, path = 'payload', subject = '(codec)'): void {
  walk(value, path, new Set(), subject);
}

/**
 * Checks then packs a value. `subject` only labels errors.
 * @example const bytes = encode({ tokens: new Int32Array([1, 2]) });
 */
export function encode(value: unknown, subject = '(codec)'): Uint8Array {
  assertSerializable(value, 'payload', subject);
  return packr.pack(value);
}

/**
 * Unpacks bytes written by {@link encode}. Typed arrays come back as their own class, in fresh memory.
 * @example decode(encode(new Float32Array([0.5]))) // Float32Array [0.5]
 */
export function decode(bytes: Uint8Array, subject = '(codec)'): unknown {
  try {
    return packr.unpack(bytes);
  } catch (error) {
    throw new InvalidMessageError(subject, `cannot decode ${bytes.byteLength} bytes: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Encode then decode: what a receiver in another process would see. Used by `MemoryBus({ encode: true })`.
 * @example roundTrip({ a: new Int32Array([1]) }) // a fresh, equal copy
 */
export function roundTrip<T>(value: T, subject = '(codec)'): T {
  return decode(encode(value, subject), subject) as T;
}
