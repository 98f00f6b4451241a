/**
 * The package version for `turnwise --version`, read from the package's own package.json, found by
 * walking up from this file (it sits at `src/cli/` when run from source, `dist/src/cli/` when built).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The `version` of the nearest package.json named `turnwise` above this file.
 * @example packageVersion() // '0.1.0'
 */
export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const path = join(dir, 'package.json');
    if (existsSync(path)) {
      const pkg = JSON.parse(readFileSync(path, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'turnwise' && typeof pkg.version === 'string') return pkg.version;
    }
    if (dirname(dir) === dir) throw new Error('turnwise package.json not found above the CLI');
  }
}
