/**
 * What a path is when it is not a regular file. A model folder is untrusted input: a directory
 * named `model.safetensors` gives a bare `EISDIR`, and a FIFO named `config.json` blocks the
 * reader forever, so loaders stat first and refuse anything that is not a regular file.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';

/**
 * `'a directory'`, `'a FIFO (named pipe)'`, … for a path that exists but is not a regular file;
 * null for a regular file; undefined when there is nothing at `path`.
 * @example if ((await nonRegularKind('m/config.json')) === 'a directory') …
 */
export async function nonRegularKind(path: string): Promise<string | null | undefined> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
  if (info.isFile()) return null;
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}
