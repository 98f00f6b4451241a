/**
 * `turnwise ui [--runs <folder>] [--port] [--host]`: the dashboard over a runs folder, until Ctrl-C.
 */
// Registers the built-in environments (this module is loaded only when its command runs).
import '../envs/index.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { exitCodeForSignal } from './exit-codes.js';
import { nextStopSignal } from './signals.js';
import { catalogCategoryResolver } from '../ui/server/eval-tables.js';
import { startUiServer } from '../ui/server/server.js';

/**
 * Starts the dashboard and prints its address.
 * @example await uiCommand({ runs: 'runs', port: 5174, host: '127.0.0.1' });
 */
export async function uiCommand(options: { runs: string; port: number; host: string }): Promise<void> {
  const ui = await startUiServer({
    runsDir: options.runs,
    port: options.port,
    host: options.host,
    resolveCategory: catalogCategoryResolver(getEnvironmentSpec),
  });
  const stopped = nextStopSignal(); // before the lines that tell a caller the server is up
  console.log(`turnwise ui: ${ui.url} (runs from ${options.runs}, read-only); Ctrl-C stops`);
  const signal = await stopped;
  await ui.close();
  process.exitCode = exitCodeForSignal(signal);
}
