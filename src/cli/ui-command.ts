/**
 * `turnwise ui [--runs <folder>] [--port] [--host]`: the dashboard over a runs folder, until Ctrl-C.
 */
import { getEnvironmentSpec } from '../envs/registry.js';
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
    // Environments self-register when the CLI imports src/envs/index.js.
    resolveCategory: catalogCategoryResolver(getEnvironmentSpec),
  });
  console.log(`turnwise ui: ${ui.url} (runs from ${options.runs}, read-only); Ctrl-C stops`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await ui.close();
}
