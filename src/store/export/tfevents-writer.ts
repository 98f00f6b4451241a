/**
 * Appends scalar events to one TensorBoard event file (`events.out.tfevents.<seconds>.turnwise`,
 * the name pattern TensorBoard scans a log folder for). Each record is written with one
 * synchronous append, so a crash loses at most the step being written and the file stays readable
 * up to the last complete record.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileVersionEvent, scalarEvent, tfRecord } from './tfevents.js';

/**
 * An open event file.
 * @example
 * const w = TfEventWriter.create('runs/x', Date.now() / 1000);
 * w.scalars(1, { 'loss/policy': 0.1 }, Date.now() / 1000);
 * w.close();
 */
export class TfEventWriter {
  private fd: number | null;

  private constructor(
    readonly path: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /** Creates (or truncates) `<dir>/events.out.tfevents.<⌊wallTime⌋>.turnwise` and writes its header. */
  static create(dir: string, wallTime: number): TfEventWriter {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `events.out.tfevents.${Math.floor(wallTime)}.turnwise`);
    const writer = new TfEventWriter(path, openSync(path, 'w'));
    writer.append(fileVersionEvent(wallTime));
    return writer;
  }

  /** One step's scalars (wall time in seconds since the epoch). */
  scalars(step: number, values: Readonly<Record<string, number>>, wallTime: number): void {
    if (Object.keys(values).length > 0) this.append(scalarEvent(wallTime, step, values));
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }

  private append(payload: Uint8Array): void {
    if (this.fd === null) throw new Error(`TfEventWriter: ${this.path} is closed`);
    writeSync(this.fd, tfRecord(payload));
  }
}
