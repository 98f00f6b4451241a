/**
 * A retrieval corpus in Search-R1's format: JSON Lines, one passage per line,
 * `{"id": "…", "contents": "\"Title\"\ntext"}` (the first line of `contents` is the title, as in
 * the wiki-18 dump). Read synchronously (catalogs are synchronous); a line that is not such an
 * object is an error naming the file and line.
 */
import { readFileSync } from 'node:fs';
import { EnvironmentError } from '../../core/errors.js';

/** One passage. */
export interface Passage {
  readonly id: string;
  /** Title line, newline, text (Search-R1's `contents`). */
  readonly contents: string;
}

/**
 * Search-R1's rendering of a passage in an `<information>` block: the title is the first line of
 * `contents`, the text the rest.
 * @example passageTitleAndText('"Paris"\nParis is …') // { title: '"Paris"', text: 'Paris is …' }
 */
export function passageTitleAndText(contents: string): { title: string; text: string } {
  const cut = contents.indexOf('\n');
  return cut < 0 ? { title: contents, text: '' } : { title: contents.slice(0, cut), text: contents.slice(cut + 1) };
}

/**
 * Parses JSON Lines text into passages (blank lines skipped); `source` names the file in errors.
 * @example parsePassages('{"id":"1","contents":"\\"A\\"\\nb"}\n', 'corpus.jsonl').length // 1
 */
export function parsePassages(text: string, source: string): Passage[] {
  const out: Passage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line.length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new EnvironmentError('deepsearch', `${source}:${i + 1}: not JSON (${(error as Error).message})`);
    }
    const record = value as { id?: unknown; contents?: unknown };
    if (typeof value !== 'object' || value === null || typeof record.contents !== 'string') {
      throw new EnvironmentError('deepsearch', `${source}:${i + 1}: expected {"id", "contents"} with "contents" a string`);
    }
    const id = typeof record.id === 'string' || typeof record.id === 'number' ? String(record.id) : String(out.length);
    out.push({ id, contents: record.contents });
  }
  return out;
}

/**
 * Reads a corpus file.
 * @example readPassages('data/deepsearch/corpus.jsonl')[0].id // '0'
 */
export function readPassages(path: string): Passage[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new EnvironmentError('deepsearch', `cannot read the corpus ${path}: ${(error as Error).message}`, { cause: error });
  }
  return parsePassages(text, path);
}
