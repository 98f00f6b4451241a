import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/core/errors.js';
import { assertSerializable, decode, encode, roundTrip } from '../../src/bus/codec.js';
import { sampleTrajectory } from '../contracts/bus.contract.js';

describe('codec', () => {
  it('round-trips typed arrays as the same class', () => {
    const value = {
      i: Int32Array.from([1, -2, 2147483647]),
      f: Float32Array.from([0.5, -1.25]),
      u: Uint8Array.from([0, 255]),
      d: Float64Array.from([Math.PI]),
      empty: new Int32Array(0),
    };
    const back = decode(encode(value)) as typeof value;
    expect(back.i).toBeInstanceOf(Int32Array);
    expect(back.f).toBeInstanceOf(Float32Array);
    expect(back.u).toBeInstanceOf(Uint8Array);
    expect(back.d).toBeInstanceOf(Float64Array);
    expect(back).toEqual(value);
  });

  it('round-trips an unaligned typed-array view into fresh memory', () => {
    const buffer = new ArrayBuffer(64);
    const view = new Float32Array(buffer, 4, 3);
    view.set([1, 2, 3]);
    const back = roundTrip(view);
    expect(back).toBeInstanceOf(Float32Array);
    expect(Array.from(back)).toEqual([1, 2, 3]);
    expect(back.buffer).not.toBe(buffer);
  });

  it('round-trips a full trajectory', () => {
    const trajectory = sampleTrajectory();
    const back = roundTrip(trajectory);
    expect(back).toEqual(trajectory);
    expect(back.turns[0].constraint).toBeNull();
    expect(back.turns[1].constraint?.allowedOffsets).toBeInstanceOf(Int32Array);
    expect(back.turns[1].actionLogprobs).toBeInstanceOf(Float32Array);
  });

  it('writes self-contained messages that another process (a fresh Packr) can decode', () => {
    const trajectory = sampleTrajectory();
    encode(trajectory); // a second message of the same shape must not rely on structures sent earlier
    const other = new Packr({ moreTypes: true });
    expect(other.unpack(encode(trajectory))).toEqual(trajectory);
  });

  it('keeps Date, Map, null, nested arrays and non-ASCII text', () => {
    const value = { at: new Date(1234), map: new Map([['k', [1, 2]]]), nothing: null, nested: [[1], ['é', true]] };
    expect(roundTrip(value)).toEqual(value);
  });

  it('rejects a function naming its path', () => {
    const bad = { turns: [{ ok: 1 }, { callback: () => 1 }] };
    expect(() => encode(bad, 'learner.trajectory')).toThrow(InvalidMessageError);
    expect(() => encode(bad, 'learner.trajectory')).toThrow("invalid message on 'learner.trajectory': at 'payload.turns[1].callback': a function cannot be serialized");
  });

  it('rejects class instances other than typed arrays, Date and Map', () => {
    class Point {
      x = 1;
    }
    expect(() => assertSerializable({ p: new Point() })).toThrow(/at 'payload\.p': Point instance cannot be serialized/);
    expect(() => assertSerializable({ s: new Set([1]) })).toThrow(/Set instance/);
    expect(() => assertSerializable({ e: new Error('x') })).toThrow(/Error instance/);
    expect(() => assertSerializable({ m: new Map([['k', { f: () => 1 }]]) })).toThrow(/payload\.m<value 0>\.f/);
    expect(() => assertSerializable({ 'odd key': Symbol('s') })).toThrow(/payload\["odd key"\]': a symbol/);
    expect(() => assertSerializable({ v: new DataView(new ArrayBuffer(4)) })).toThrow(/DataView/);
  });

  it('rejects cycles instead of overflowing the stack', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    expect(() => encode(a)).toThrow(/at 'payload\.self': circular reference/);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { v: 1 };
    expect(roundTrip({ a: shared, b: shared })).toEqual({ a: { v: 1 }, b: { v: 1 } });
  });

  it('reports undecodable bytes as InvalidMessageError', () => {
    expect(() => decode(Uint8Array.from([0x92, 0x01]), 'x.y')).toThrow(InvalidMessageError);
  });
});
