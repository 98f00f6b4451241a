/**
 * The dashboard's view of a runs folder: which run folders hold a `run.db`, the runs inside each,
 * and one READ-ONLY `RunStore` per folder, opened on first use and kept (WAL lets us read while a
 * training process writes).
 *
 * A run's dashboard id is its folder path relative to the runs folder, plus `:<runId>` when the
 * folder holds several runs or an eval run whose id differs from the folder name (eval folders
 * hold one run per policy). Ids are only
 * ever looked up in the scanned index, never joined onto a path, so a crafted id cannot reach a
 * file outside the runs folder; ids that look like traversal are refused before the lookup.
 *
 * A run folder can be replaced under the open dashboard (`train --force` deletes it and starts a
 * new run there); the held store would go on reading the deleted file. Each lookup stats the
 * `run.db` (one syscall) and reopens when its device or inode changed, rescanning for the run it
 * now holds; a folder whose `run.db` is gone is dropped, so its run answers 404.
 */
import { existsSync, readdirSync, type BigIntStats, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { InvalidArgumentError } from '../../core/errors.js';
import { type RunRecord, RunStore } from '../../store/run-store.js';

/** A run as the dashboard addresses it. */
export interface IndexedRun {
  /** Dashboard id (`babyai-grpo`, `eval-babyai:checkpoint`). */
  readonly id: string;
  /** Folder relative to the runs folder, `/`-separated. */
  readonly folder: string;
  /** Absolute run folder. */
  readonly dir: string;
  readonly record: RunRecord;
}

/** A folder with a `run.db` the index could not read (shown, not fatal). */
export interface SkippedFolder {
  readonly folder: string;
  readonly error: string;
}

/** Raised for an id that looks like a path escape (HTTP 400). */
export class PathTraversalError extends InvalidArgumentError {}
/** Raised for an id that names no run (HTTP 404). */
export class UnknownRunError extends InvalidArgumentError {}

/** `turnwise eval` folders hold one run per policy, each with an `eval` section in its config. */
function isEvalRun(record: RunRecord): boolean {
  return typeof record.config === 'object' && record.config !== null && 'eval' in record.config;
}

/** An open store and the identity of the file it was opened on. */
interface HeldStore {
  readonly store: RunStore;
  readonly dev: bigint;
  readonly ino: bigint;
}

/** The `run.db` of a folder as the file system names it now, or null when there is none. */
function fileIdentity(dir: string): BigIntStats | null {
  return statSync(join(dir, 'run.db'), { bigint: true, throwIfNoEntry: false }) ?? null;
}

/** How deep below the runs folder to look for `run.db` (runs/<name>, runs/<group>/<name>). */
const MAX_DEPTH = 2;

/**
 * Refuses ids that could address a path: `..` segments, absolute paths, backslashes, NUL.
 * @example checkSafeId('runId', 'babyai-grpo') // ok; checkSafeId('runId', '../etc') throws PathTraversalError
 */
export function checkSafeId(field: string, id: string): void {
  const bad =
    id.length === 0 || id.length > 512 || id.includes('\0') || id.includes('\\') || id.startsWith('/') || id.split(/[/:]/).some((part) => part === '..' || part === '.');
  if (bad) throw new PathTraversalError(field, `${JSON.stringify(id.slice(0, 80))} is not a run id (path segments like '..' and absolute paths are refused)`);
}

/**
 * Scans a runs folder and serves read-only stores by dashboard id.
 * @example
 * const index = new RunIndex('runs');
 * const { store, run } = index.open('babyai-grpo'); // store.metricsSeries('rollout/successRate')
 */
export class RunIndex {
  readonly root: string;
  private runs = new Map<string, IndexedRun>();
  private skipped: SkippedFolder[] = [];
  private readonly stores = new Map<string, HeldStore>();

  constructor(root: string) {
    this.root = resolve(root);
    if (!existsSync(this.root) || !statSync(this.root).isDirectory()) {
      throw InvalidArgumentError.format('--runs', `${this.root} is not a folder (give the folder that holds run folders, e.g. runs)`);
    }
  }

  /** Rescans the folder (new runs appear, statuses change, replaced and deleted runs are reopened or dropped). */
  scan(): { runs: IndexedRun[]; skipped: SkippedFolder[] } {
    const runs = new Map<string, IndexedRun>();
    const skipped: SkippedFolder[] = [];
    const dirs = this.runFolders(this.root, 0);
    for (const dir of dirs) {
      // `--runs runs/babyai-grpo` (a run folder itself) names the run by its folder.
      const folder = dir === this.root ? basename(dir) : relative(this.root, dir).split(sep).join('/');
      try {
        const store = this.storeAt(dir);
        const records = store.runs();
        for (const record of records) {
          // A training folder holds one run (its id is unique, `<name>-<hex>`): the folder names it.
          const alone = records.length === 1 && !isEvalRun(record);
          const id = alone || record.id === basename(dir) ? folder : `${folder}:${record.id}`;
          runs.set(id, { id, folder, dir, record });
        }
      } catch (error) {
        skipped.push({ folder, error: (error as Error).message });
      }
    }
    // Folders that are gone: close their stores, which frees the deleted files.
    const found = new Set(dirs);
    for (const dir of [...this.stores.keys()]) if (!found.has(dir)) this.drop(dir);
    this.runs = runs;
    this.skipped = skipped;
    return { runs: [...runs.values()], skipped };
  }

  /**
   * The store of a run, made the active run. Rescans once on a miss (a run started since) or when
   * the run's folder now holds another `run.db` (replaced or deleted).
   */
  open(id: string): { store: RunStore; run: IndexedRun } {
    checkSafeId('runId', id);
    let run = this.runs.get(id);
    if (run === undefined || this.isReplaced(run.dir)) {
      this.scan();
      run = this.runs.get(id);
    }
    if (run === undefined) {
      const known = [...this.runs.keys()].slice(0, 20).join(', ') || 'none';
      throw new UnknownRunError('runId', `no run '${id}' under ${this.root} (known: ${known})`);
    }
    const store = this.storeAt(run.dir);
    store.useRun(run.record.id);
    // Status and config can change while a run trains: read the record fresh.
    return { store, run: { ...run, record: store.run(run.record.id) ?? run.record } };
  }

  /** Runs from the last scan, plus folders that could not be read. */
  list(): { runs: IndexedRun[]; skipped: SkippedFolder[] } {
    return { runs: [...this.runs.values()], skipped: this.skipped };
  }

  /** Closes every store. */
  close(): void {
    for (const dir of [...this.stores.keys()]) this.drop(dir);
  }

  /** Whether the store held for `dir` was opened on a file that is no longer its `run.db`. */
  private isReplaced(dir: string): boolean {
    const held = this.stores.get(dir);
    if (held === undefined) return false;
    const now = fileIdentity(dir);
    return now === null || now.dev !== held.dev || now.ino !== held.ino;
  }

  private drop(dir: string): void {
    this.stores.get(dir)?.store.close();
    this.stores.delete(dir);
  }

  /** The store of `dir`, reopened when its `run.db` was replaced since it was opened. */
  private storeAt(dir: string): RunStore {
    if (this.isReplaced(dir)) this.drop(dir);
    let held = this.stores.get(dir);
    if (held === undefined) {
      // Identity first: a file replaced between the stat and the open is noticed on the next lookup.
      const identity = fileIdentity(dir);
      const store = RunStore.open(dir, { readonly: true });
      held = { store, dev: identity?.dev ?? -1n, ino: identity?.ino ?? -1n };
      this.stores.set(dir, held);
    }
    return held.store;
  }

  private runFolders(dir: string, depth: number): string[] {
    if (existsSync(join(dir, 'run.db'))) return [dir];
    if (depth >= MAX_DEPTH) return [];
    let entries: string[];
    try {
      entries = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'checkpoints')
        .map((e) => e.name)
        .sort();
    } catch {
      return [];
    }
    return entries.flatMap((name) => this.runFolders(join(dir, name), depth + 1));
  }
}
