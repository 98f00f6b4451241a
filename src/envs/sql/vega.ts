/**
 * Reads the tabular files shipped in the `vega-datasets` package (installed with turnwise): the
 * package root is found through Node's resolver, then files are read from its `data/` folder.
 * Shared by the SQL and deep-search environments.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { EnvironmentError } from '../../core/errors.js';
import { parseCsv } from './csv.js';

const require = createRequire(import.meta.url);
let root: string | null = null;

/** Folder of the installed `vega-datasets` package. */
function packageRoot(): string {
  if (root !== null) return root;
  let dir: string;
  try {
    // The package's `exports` hide package.json, so resolve its entry and walk up to the folder.
    dir = dirname(require.resolve('vega-datasets'));
  } catch (cause) {
    throw new EnvironmentError('sql', 'the vega-datasets package is not installed (npm install vega-datasets)', { cause });
  }
  for (let i = 0; i < 4; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'vega-datasets') {
        root = dir;
        return dir;
      }
    } catch {
      // not this folder
    }
    dir = dirname(dir);
  }
  throw new EnvironmentError('sql', 'could not locate the vega-datasets package folder');
}

/**
 * Version of the installed vega-datasets (part of the database cache key).
 * @example vegaDatasetsVersion() // '3.2.1'
 */
export function vegaDatasetsVersion(): string {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

/** A record as read from a vega file: JSON values, or strings for CSV. */
export type VegaRecord = Readonly<Record<string, unknown>>;

/**
 * The records of `data/<file>` (`.json` arrays or `.csv` with a header row).
 * @example readVegaTable('cars.json')[0].Name // 'chevrolet chevelle malibu'
 */
export function readVegaTable(file: string): VegaRecord[] {
  if (!/^[A-Za-z0-9._-]+\.(json|csv)$/.test(file)) throw new EnvironmentError('sql', `unsupported vega-datasets file ${JSON.stringify(file)}`);
  const text = readFileSync(join(packageRoot(), 'data', file), 'utf8');
  if (file.endsWith('.csv')) return parseCsv(text);
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new EnvironmentError('sql', `vega-datasets file ${file} is not a JSON array`);
  return parsed as VegaRecord[];
}
