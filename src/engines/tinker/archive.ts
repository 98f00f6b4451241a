/**
 * A sampler checkpoint's archive (gzip'd tar) → the two PEFT files in a folder.
 *
 * Read with `tar` (npm's own tar library: gzip detection, PAX headers) as a stream of entries;
 * only regular files named `adapter_config.json` and `adapter_model.safetensors` are kept, by
 * base name, so an archive's own paths never decide where anything is written. That skips the
 * directory entry SkyRL puts first (raw name `/`) and any folder nesting another server uses.
 *
 * SkyRL writes `target_modules: null`, which PEFT reads as "q_proj and v_proj only" and which
 * turnwise's adapter reader refuses; the modules are filled in from the tensor names, which name
 * every adapted projection.
 */
import { basename, dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import { writeFolderAtomic } from '../../core/atomic-file.js';
import { CheckpointError } from '../../core/errors.js';
import { decodeSafetensors } from '../../models/safetensors.js';

const CONFIG = 'adapter_config.json';
const WEIGHTS = 'adapter_model.safetensors';
/** Largest file kept from an archive (an adapter of a 70B model at rank 64 is under 2 GiB). */
const MAX_FILE_BYTES = 4 * 1024 ** 3;

/**
 * The PEFT files of an archive, by name.
 * @example const files = await readAdapterArchive(bytes, 'tinker://model_1/sampler_weights/step-000003');
 */
export async function readAdapterArchive(archive: Uint8Array, source: string): Promise<Map<string, Uint8Array>> {
  const found = new Map<string, Uint8Array>();
  const parser = new Parser({
    onReadEntry: (entry: ReadEntry) => {
      const name = basename(entry.path.replace(/\/+$/, ''));
      if (entry.type !== 'File' || (name !== CONFIG && name !== WEIGHTS)) {
        entry.resume();
        return;
      }
      if (found.has(name)) throw new CheckpointError(source, `the archive holds more than one '${name}'`);
      if (entry.size > MAX_FILE_BYTES) throw new CheckpointError(source, `'${name}' is ${entry.size} bytes, more than an adapter can be`);
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => found.set(name, new Uint8Array(Buffer.concat(chunks))));
    },
  });
  try {
    await pipeline(Readable.from([Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength)]), parser);
  } catch (error) {
    if (error instanceof CheckpointError) throw error;
    throw new CheckpointError(source, `not a readable tar(.gz) archive: ${(error as Error).message}`);
  }
  for (const name of [CONFIG, WEIGHTS]) if (!found.has(name)) throw new CheckpointError(source, `the archive has no '${name}' (found: ${[...found.keys()].join(', ') || 'nothing usable'})`);
  return found;
}

/**
 * `adapter_config.json` with `target_modules` filled in from the tensor names when the server left
 * it null or empty (`…layers.0.self_attn.q_proj.lora_A.weight` → `q_proj`).
 * @example completeAdapterConfig(configBytes, weightBytes, source).target_modules // ['q_proj', 'k_proj', …]
 */
export function completeAdapterConfig(config: Uint8Array, weights: Uint8Array, source: string): Record<string, unknown> {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(new TextDecoder().decode(config));
  } catch (error) {
    throw new CheckpointError(source, `${CONFIG} is not JSON: ${(error as Error).message}`);
  }
  const targets = json.target_modules;
  if (Array.isArray(targets) && targets.length > 0) return json;
  const modules = new Set<string>();
  for (const key of Object.keys(decodeSafetensors(weights, `${source}/${WEIGHTS}`).tensors)) {
    const match = /\.([A-Za-z0-9_]+)\.lora_[AB](?:\.[A-Za-z0-9_]+)?\.weight$/.exec(key);
    if (match?.[1]) modules.add(match[1]);
  }
  if (modules.size === 0) throw new CheckpointError(source, `${CONFIG} names no target_modules and no tensor of ${WEIGHTS} is a LoRA matrix`);
  return { ...json, target_modules: [...modules].sort() };
}

/**
 * Extracts an adapter archive into `folder` (replaced atomically): `adapter_config.json` (with its
 * target modules completed) and `adapter_model.safetensors` byte for byte.
 * @example await extractAdapterArchive(bytes, 'runs/x/checkpoints/step-000003/adapter', 'tinker://…');
 */
export async function extractAdapterArchive(archive: Uint8Array, folder: string, source: string): Promise<void> {
  const files = await readAdapterArchive(archive, source);
  const weights = files.get(WEIGHTS) as Uint8Array;
  const config = completeAdapterConfig(files.get(CONFIG) as Uint8Array, weights, source);
  await writeFolderAtomic(dirname(folder), basename(folder), [
    { name: CONFIG, data: `${JSON.stringify(config, null, 2)}\n` },
    { name: WEIGHTS, data: weights },
  ]);
}
