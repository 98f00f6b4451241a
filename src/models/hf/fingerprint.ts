/**
 * The identity of a pretrained base (`model.from`), so that a LoRA run (whose checkpoints hold only
 * adapters) is never resumed, evaluated or served on another model dropped into the same folder.
 *
 * Cheap by design (milliseconds, whatever the model's size): SHA-256 over, in name order, each
 * small file whole (`config.json`, `tokenizer.json`, `tokenizer_config.json`, the shard index) and,
 * for each weight file, its name, size, safetensors header and 64 blocks of 4 KiB spread evenly
 * over its data. Headers and sizes alone would not do: two models of one architecture have equal
 * headers; their weights differ in every block. (A model that differs from the base only outside
 * the sampled blocks would pass: a few changed tensors, not a different model.)
 */
import { createHash } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InvalidConfigError } from '../../core/errors.js';
import { weightFiles } from './hf-weights.js';

/** What a run records about its base. */
export interface BaseModelIdentity {
  /** The folder, absolute, as the run opened it. */
  readonly folder: string;
  /** Hex SHA-256 (module comment). */
  readonly sha256: string;
  /** Total bytes of the weight files. */
  readonly weightBytes: number;
}

const SMALL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors.index.json'] as const;
const SAMPLES = 64;
const BLOCK = 4096;

/**
 * Fingerprints the model folder `folder`.
 * @example const base = await baseModelIdentity('models/SmolLM2-135M-Instruct'); // { folder, sha256, weightBytes }
 */
export async function baseModelIdentity(folder: string): Promise<BaseModelIdentity> {
  const hash = createHash('sha256');
  for (const file of SMALL_FILES) {
    const bytes = await readFile(join(folder, file)).catch(() => null);
    hash.update(`${file}\0${bytes === null ? -1 : bytes.length}\0`);
    if (bytes !== null) hash.update(bytes);
  }
  const { files, bytes } = await weightFiles(folder);
  for (const file of files) {
    const handle = await open(join(folder, file), 'r');
    try {
      const { size } = await handle.stat();
      const lengthBytes = Buffer.alloc(8);
      await handle.read(lengthBytes, 0, 8, 0);
      // weightFiles has checked the header length already.
      const headerEnd = 8 + Number(lengthBytes.readBigUInt64LE(0));
      const header = Buffer.alloc(headerEnd - 8);
      await handle.read(header, 0, header.length, 8);
      hash.update(`${file}\0${size}\0`).update(header);
      const span = Math.max(0, size - headerEnd - BLOCK);
      const block = Buffer.alloc(BLOCK);
      for (let i = 0; i < SAMPLES; i++) {
        const { bytesRead } = await handle.read(block, 0, BLOCK, headerEnd + Math.floor((span * i) / (SAMPLES - 1)));
        hash.update(block.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
  }
  return { folder: resolve(folder), sha256: hash.digest('hex'), weightBytes: bytes };
}

/**
 * Refuses `folder` when it is not the base `recorded` (what a checkpoint's `state.baseModel` holds;
 * nothing recorded, as in checkpoints from before fingerprints, passes). `where` names the record.
 * @throws InvalidConfigError naming `model.from`, both fingerprints and both folders.
 * @example await checkBaseModel(checkpoint.state.baseModel, config.model.from, 'runs/x/checkpoints/step-10');
 */
export async function checkBaseModel(recorded: unknown, folder: string, where: string): Promise<void> {
  if (recorded === undefined || recorded === null) return;
  const r = recorded as Partial<BaseModelIdentity>;
  if (typeof r.sha256 !== 'string' || typeof r.folder !== 'string') throw new InvalidConfigError('model.from', `${where} records its base model as ${JSON.stringify(recorded)}, not { folder, sha256, weightBytes }`);
  const current = await baseModelIdentity(folder);
  if (current.sha256 === r.sha256) return;
  throw new InvalidConfigError(
    'model.from',
    `${current.folder} is not the base model this run was trained on: ${where} was trained on ${r.folder} (fingerprint ${r.sha256.slice(0, 16)}, ${r.weightBytes ?? '?'} bytes of weights), ` +
      `the folder now holds fingerprint ${current.sha256.slice(0, 16)} (${current.weightBytes} bytes of weights). Put the original model back in ${current.folder}, or point model.from at it`,
  );
}
