/**
 * Crash-safe file writes: write-then-rename with fsync, so a reader (or a process resumed after a
 * kill -9 or a power cut) sees either the old content or the new one, never a truncated file.
 *
 * POSIX `rename(2)` replaces its target atomically; fsync of the file before the rename makes the
 * new bytes durable before the name points at them, and fsync of the folder after it makes the
 * rename itself durable (ext4 and xfs keep the rename in the folder's metadata).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** One file of a folder written by {@link writeFolderAtomic}. */
export interface AtomicFile {
  /** File name inside the folder (no `/`). */
  readonly name: string;
  readonly data: string | Uint8Array;
}

const tmpSuffix = () => `${process.pid}-${randomBytes(4).toString('hex')}`;

/** Writes `data` to a new file and fsyncs it (the file must not exist). */
async function writeDurably(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes a folder's entries (new, renamed or removed names) durable.
 * @example await fsyncDir('runs/babyai/checkpoints');
 */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `data` atomically and durably. `beforeRename` runs once the new content is
 * durable under a temporary name, just before it takes the real name (fault tests stop there).
 * @example await writeFileAtomic('runs/babyai/checkpoints/latest', 'step-000010\n');
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: { beforeRename?: () => void } = {}): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.tmp-${tmpSuffix()}`);
  try {
    await writeDurably(tmp, data);
    options.beforeRename?.();
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await fsyncDir(dir);
}

/**
 * Writes a whole folder atomically: every file into a temporary sibling folder (each fsynced),
 * then one rename puts the folder in place. An existing folder of that name is replaced; while
 * that happens it is moved aside, so a crash leaves either the old or the new folder under
 * `name`, or neither (never a half-written one). Names starting with `.` are temporary.
 * @example await writeFolderAtomic('runs/babyai/checkpoints', 'step-000010', [{ name: 'config.json', data: '{}' }]);
 */
export async function writeFolderAtomic(parent: string, name: string, files: readonly AtomicFile[]): Promise<string> {
  const seen = new Set<string>();
  for (const f of files) {
    if (f.name.length === 0 || f.name.includes('/') || f.name.startsWith('.') || seen.has(f.name)) {
      throw new Error(`writeFolderAtomic: bad or repeated file name ${JSON.stringify(f.name)}`);
    }
    seen.add(f.name);
  }
  await mkdir(parent, { recursive: true });
  const finalDir = join(parent, name);
  const tmpDir = join(parent, `.tmp-${name}-${tmpSuffix()}`);
  await mkdir(tmpDir);
  try {
    for (const f of files) await writeDurably(join(tmpDir, f.name), f.data);
    await fsyncDir(tmpDir);
  } catch (error) {
    await rm(tmpDir, { recursive: true, force: true });
    throw error;
  }
  // rename() cannot replace a non-empty folder: move the old one aside first, remove it last.
  const aside = join(parent, `.old-${name}-${tmpSuffix()}`);
  const replaced = await rename(finalDir, aside).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
  await rename(tmpDir, finalDir);
  await fsyncDir(parent);
  if (replaced) await rm(aside, { recursive: true, force: true });
  return finalDir;
}
