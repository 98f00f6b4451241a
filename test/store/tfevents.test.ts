import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crc32c, maskedCrc32c } from '../../src/store/export/crc32c.js';
import { readTfEvents, scalarEvent, tfRecord } from '../../src/store/export/tfevents.js';
import { TfEventWriter } from '../../src/store/export/tfevents-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-tfevents-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('CRC-32C', () => {
  it('matches the published check values', () => {
    // The standard check value of CRC-32C, and the 32-zero-byte vector of RFC 3720 (iSCSI), B.4.
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
  });

  it('masks as TensorFlow does: rotate right 15, add 0xa282ead8', () => {
    const bytes = new TextEncoder().encode('123456789');
    const c = 0xe3069283;
    expect(maskedCrc32c(bytes)).toBe((((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0);
  });
});

describe('TensorBoard event files', () => {
  it('encodes an Event with a Summary of simple_value exactly as the protobuf wire format says', () => {
    // Event { wall_time (1, fixed64) = 0; step (2, varint) = 1; summary (5, bytes) = Summary { value (1) = Value { tag (1) = "a"; simple_value (2, fixed32) = 1.0 } } }
    expect(hex(scalarEvent(0, 1, { a: 1 }))).toBe(`09${'00'.repeat(8)}1001` + '2a0a' + '0a08' + '0a0161' + '150000803f');
    // A step above 2^32 takes a 5+-byte varint, not a truncated 32-bit one.
    const big = readTfEvents(tfRecord(scalarEvent(0, 2 ** 40 + 3, { a: 1 })));
    expect(big[0]?.step).toBe(2 ** 40 + 3);
  });

  it('frames records as TFRecord: little-endian length, masked CRC of the length, data, masked CRC of the data', () => {
    const payload = new Uint8Array([1, 2, 3]);
    const record = tfRecord(payload);
    expect(record.length).toBe(8 + 4 + 3 + 4);
    expect(hex(record.subarray(0, 8))).toBe('0300000000000000');
    const view = new DataView(record.buffer);
    expect(view.getUint32(8, true)).toBe(maskedCrc32c(record.subarray(0, 8)));
    expect(view.getUint32(15, true)).toBe(maskedCrc32c(payload));
  });

  it('writes a file that reads back: version header, then one event per step with its tags and values', () => {
    const writer = TfEventWriter.create(dir, 1_700_000_000.5);
    writer.scalars(1, { 'rollout/successRate': 0.25, 'loss/policy': -0.125 }, 1_700_000_001);
    writer.scalars(2, { 'rollout/successRate': 0.5, 'loss/policy': Number.NaN }, 1_700_000_002);
    writer.scalars(3, {}, 1_700_000_003); // nothing logged: no record
    writer.scalars(10, { 'eval/successRate': 0.3 }, 1_700_000_010);
    writer.close();
    expect(readdirSync(dir)).toEqual(['events.out.tfevents.1700000000.turnwise']);

    const events = readTfEvents(readFileSync(writer.path));
    expect(events).toHaveLength(4);
    expect(events[0]).toMatchObject({ wallTime: 1_700_000_000.5, step: 0, fileVersion: 'brain.Event:2' });
    expect(events.slice(1).map((e) => [e.step, e.wallTime])).toEqual([
      [1, 1_700_000_001],
      [2, 1_700_000_002],
      [10, 1_700_000_010],
    ]);
    expect([...(events[1]?.scalars ?? [])]).toEqual([
      ['rollout/successRate', 0.25],
      ['loss/policy', -0.125],
    ]);
    expect(events[2]?.scalars.get('rollout/successRate')).toBe(0.5);
    expect(events[2]?.scalars.get('loss/policy')).toBeNaN();
    // simple_value is a float32: 0.3 comes back as the nearest float32.
    expect(events[3]?.scalars.get('eval/successRate')).toBe(Math.fround(0.3));
  });

  it('refuses a corrupted or torn file, naming the byte offset', () => {
    const file = readFileSync(join(dir, 'events.out.tfevents.1700000000.turnwise'));
    const flipped = Buffer.from(file);
    flipped[40] = (flipped[40] as number) ^ 0xff;
    expect(() => readTfEvents(flipped)).toThrow(/bad (payload|length) CRC at byte \d+/);
    expect(() => readTfEvents(file.subarray(0, file.length - 2))).toThrow(/truncated record at byte \d+/);
  });
});
