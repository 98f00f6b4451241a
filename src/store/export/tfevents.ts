/**
 * TensorBoard event files, written and read without TensorFlow: TFRecord framing (length, masked
 * CRC-32C of the length, payload, masked CRC-32C of the payload) around `tensorflow.Event`
 * protobufs, each carrying a `Summary` of scalar `simple_value`s. No maintained npm package writes
 * this format, and the part TensorBoard's scalar dashboard reads is small, so it is encoded here
 * field by field:
 *
 * ```
 * Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
 * Summary { repeated Value value = 1; }   Value { string tag = 1; float simple_value = 2; }
 * ```
 *
 * The first record of a file is `file_version: "brain.Event:2"`, as TensorBoard expects.
 */
import { maskedCrc32c } from './crc32c.js';

/** One event as read back: the header carries `fileVersion`, scalar events carry `scalars`. */
export interface TfEvent {
  readonly wallTime: number;
  readonly step: number;
  readonly fileVersion?: string;
  /** tag -> value (float32, as TensorBoard stores it). */
  readonly scalars: ReadonlyMap<string, number>;
}

const FILE_VERSION = 'brain.Event:2';
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Grows a byte buffer as protobuf fields are appended. */
class ProtoWriter {
  private bytes = new Uint8Array(64);
  private length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
  }

  varint(value: number): this {
    // Steps are non-negative integers below 2^53: plain arithmetic avoids 32-bit truncation.
    let v = value;
    this.reserve(10);
    while (v >= 0x80) {
      this.bytes[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.bytes[this.length++] = v;
    return this;
  }

  tag(field: number, wireType: 0 | 1 | 2 | 5): this {
    return this.varint(field * 8 + wireType);
  }

  double(value: number): this {
    this.reserve(8);
    new DataView(this.bytes.buffer).setFloat64(this.length, value, true);
    this.length += 8;
    return this;
  }

  float(value: number): this {
    this.reserve(4);
    new DataView(this.bytes.buffer).setFloat32(this.length, value, true);
    this.length += 4;
    return this;
  }

  bytesField(field: number, data: Uint8Array): this {
    this.tag(field, 2).varint(data.length);
    this.reserve(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
    return this;
  }

  finish(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

function encodeEvent(wallTime: number, step: number, body: (w: ProtoWriter) => void): Uint8Array {
  const w = new ProtoWriter().tag(1, 1).double(wallTime);
  if (step !== 0) w.tag(2, 0).varint(step);
  body(w);
  return w.finish();
}

/**
 * The header event every event file starts with.
 * @example fileVersionEvent(Date.now() / 1000)
 */
export function fileVersionEvent(wallTime: number): Uint8Array {
  return encodeEvent(wallTime, 0, (w) => w.bytesField(3, encoder.encode(FILE_VERSION)));
}

/**
 * One event holding the scalars of a step (NaN stays NaN, as TensorBoard shows it).
 * @example scalarEvent(1700000000, 3, { 'loss/policy': 0.12 })
 */
export function scalarEvent(wallTime: number, step: number, scalars: Readonly<Record<string, number>>): Uint8Array {
  if (!Number.isSafeInteger(step) || step < 0) throw new RangeError(`scalarEvent: step must be a non-negative integer, got ${step}`);
  const summary = new ProtoWriter();
  for (const [tag, value] of Object.entries(scalars)) {
    const v = new ProtoWriter().bytesField(1, encoder.encode(tag)).tag(2, 5).float(value).finish();
    summary.bytesField(1, v);
  }
  return encodeEvent(wallTime, step, (w) => w.bytesField(5, summary.finish()));
}

/**
 * Frames one payload as a TFRecord.
 * @example appendFileSync(path, tfRecord(scalarEvent(t, step, metrics)))
 */
export function tfRecord(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + payload.length + 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, payload.length, true); // uint64 length, little-endian: low word …
  view.setUint32(4, Math.floor(payload.length / 2 ** 32), true); // … high word
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(payload, 12);
  view.setUint32(12 + payload.length, maskedCrc32c(payload), true);
  return out;
}

/** A protobuf reader over one message's bytes. */
class ProtoReader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  done(): boolean {
    return this.pos >= this.bytes.length;
  }

  varint(): number {
    let result = 0;
    for (let scale = 1; ; scale *= 0x80) {
      if (this.pos >= this.bytes.length) throw new RangeError('protobuf: truncated varint');
      const b = this.bytes[this.pos++] as number;
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
    }
  }

  fixed64Double(): number {
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  fixed32Float(): number {
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  lengthDelimited(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.bytes.length) throw new RangeError('protobuf: field runs past the message');
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.lengthDelimited();
    else if (wireType === 5) this.pos += 4;
    else throw new RangeError(`protobuf: unsupported wire type ${wireType}`);
  }
}

function decodeValue(bytes: Uint8Array): [string, number] | null {
  const r = new ProtoReader(bytes);
  let tag = '';
  let value: number | null = null;
  while (!r.done()) {
    const key = r.varint();
    if (key === 0x0a) tag = decoder.decode(r.lengthDelimited());
    else if (key === 0x15) value = r.fixed32Float();
    else r.skip(key & 7);
  }
  return value === null ? null : [tag, value];
}

function decodeEvent(bytes: Uint8Array): TfEvent {
  const r = new ProtoReader(bytes);
  let wallTime = 0;
  let step = 0;
  let fileVersion: string | undefined;
  const scalars = new Map<string, number>();
  while (!r.done()) {
    const key = r.varint();
    if (key === 0x09) wallTime = r.fixed64Double();
    else if (key === 0x10) step = r.varint();
    else if (key === 0x1a) fileVersion = decoder.decode(r.lengthDelimited());
    else if (key === 0x2a) {
      const summary = new ProtoReader(r.lengthDelimited());
      while (!summary.done()) {
        const k = summary.varint();
        if (k !== 0x0a) {
          summary.skip(k & 7);
          continue;
        }
        const entry = decodeValue(summary.lengthDelimited());
        if (entry) scalars.set(entry[0], entry[1]);
      }
    } else r.skip(key & 7);
  }
  return { wallTime, step, scalars, ...(fileVersion !== undefined ? { fileVersion } : {}) };
}

/**
 * Reads every record of an event file, checking both CRCs of each; a torn last record (a run
 * killed mid-write) is an error naming its offset.
 * @example const events = readTfEvents(readFileSync('runs/x/events.out.tfevents.1700000000.turnwise'));
 */
export function readTfEvents(file: Uint8Array): TfEvent[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const events: TfEvent[] = [];
  for (let pos = 0; pos < file.length; ) {
    if (pos + 12 > file.length) throw new RangeError(`tfevents: truncated record header at byte ${pos}`);
    const length = view.getUint32(pos, true) + view.getUint32(pos + 4, true) * 2 ** 32;
    if (view.getUint32(pos + 8, true) !== maskedCrc32c(file.subarray(pos, pos + 8))) throw new RangeError(`tfevents: bad length CRC at byte ${pos}`);
    const start = pos + 12;
    if (start + length + 4 > file.length) throw new RangeError(`tfevents: truncated record at byte ${pos}`);
    const payload = file.subarray(start, start + length);
    if (view.getUint32(start + length, true) !== maskedCrc32c(payload)) throw new RangeError(`tfevents: bad payload CRC at byte ${pos}`);
    events.push(decodeEvent(payload));
    pos = start + length + 4;
  }
  return events;
}
