/**
 * Question-answering sets in Search-R1's layout: rows with `question` and `golden_answers` (a list
 * of strings, or one string), as FlashRAG's JSONL files and Search-R1's processed Parquet files
 * (`scripts/data_process/nq_search.py` keeps those columns beside verl's `prompt`, `reward_model`,
 * …) both have them; `reward_model.ground_truth.target` is read when `golden_answers` is absent,
 * and `data_source` (nq, hotpotqa, …) becomes the task's category.
 *
 * JSON Lines files are read synchronously. Parquet files (read with hyparquet: pure JavaScript,
 * snappy built in, no native build) give their row count synchronously from the footer, so a
 * catalog can be built at once, and their rows on first use.
 */
import { readFileSync } from 'node:fs';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { EnvironmentError } from '../../core/errors.js';

/** One question. */
export interface QaItem {
  readonly question: string;
  readonly goldenAnswers: readonly string[];
  /** `data_source` when the file has it. */
  readonly source?: string;
}

/** A QA file: its size at once, its rows (possibly after reading them). */
export interface QaSet {
  readonly path: string;
  readonly size: number;
  /** The rows, read on first call (cached). */
  items(): Promise<readonly QaItem[]>;
  /** The rows when already read (JSONL: always), else null. */
  itemsNow(): readonly QaItem[] | null;
}

function fail(path: string, detail: string): never {
  throw new EnvironmentError('deepsearch', `${path}: ${detail}`);
}

/**
 * Reads one row (an object from JSON or Parquet) as a QA item; `where` names it in errors.
 * @example qaItemOf({ question: 'who?', golden_answers: ['me'] }, 'qa.jsonl:1')
 */
export function qaItemOf(row: unknown, where: string): QaItem {
  if (typeof row !== 'object' || row === null) fail(where, 'expected an object with "question" and "golden_answers"');
  const r = row as { question?: unknown; golden_answers?: unknown; reward_model?: { ground_truth?: { target?: unknown } }; data_source?: unknown };
  if (typeof r.question !== 'string' || r.question.trim().length === 0) fail(where, '"question" must be a non-empty string');
  let golds: unknown = r.golden_answers ?? r.reward_model?.ground_truth?.target;
  if (typeof golds === 'string') golds = [golds];
  if (!Array.isArray(golds) || golds.length === 0 || !golds.every((g) => typeof g === 'string')) {
    fail(where, '"golden_answers" must be a non-empty list of strings (or reward_model.ground_truth.target)');
  }
  return { question: r.question.trim(), goldenAnswers: golds as string[], ...(typeof r.data_source === 'string' ? { source: r.data_source } : {}) };
}

function jsonlSet(path: string, text: string): QaSet {
  const items: QaItem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line.length === 0) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (error) {
      fail(`${path}:${i + 1}`, `not JSON (${(error as Error).message})`);
    }
    items.push(qaItemOf(row, `${path}:${i + 1}`));
  }
  Object.freeze(items);
  return { path, size: items.length, items: () => Promise.resolve(items), itemsNow: () => items };
}

function parquetSet(path: string, bytes: Buffer): QaSet {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let size: number;
  let columns: Set<string>;
  try {
    const meta = parquetMetadata(file);
    size = Number(meta.num_rows);
    columns = new Set(meta.schema.map((s) => s.name));
  } catch (error) {
    fail(path, `not a readable Parquet file (${(error as Error).message})`);
  }
  const wanted = ['question', 'golden_answers', 'reward_model', 'data_source'].filter((c) => columns.has(c));
  let loaded: readonly QaItem[] | null = null;
  let loading: Promise<readonly QaItem[]> | null = null;
  return {
    path,
    size,
    itemsNow: () => loaded,
    items() {
      loading ??= parquetReadObjects({ file, columns: wanted }).then((rows) => {
        loaded = Object.freeze(rows.map((row, i) => qaItemOf(row, `${path} row ${i}`)));
        return loaded;
      });
      return loading;
    },
  };
}

const cache = new Map<string, QaSet>();

/**
 * The QA set in `path` (`.parquet` read as Parquet, anything else as JSON Lines), cached per path.
 * @example readQaSet('data/deepsearch/test.jsonl').size // 200
 */
export function readQaSet(path: string): QaSet {
  const hit = cache.get(path);
  if (hit !== undefined) return hit;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new EnvironmentError('deepsearch', `cannot read the QA file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const set = path.endsWith('.parquet') ? parquetSet(path, bytes) : jsonlSet(path, bytes.toString('utf8'));
  if (set.size === 0) fail(path, 'no questions');
  cache.set(path, set);
  return set;
}
