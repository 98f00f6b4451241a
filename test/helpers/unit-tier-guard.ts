/**
 * Setup file of the unit tier (vitest.config.ts): the unit tier is pure and in-process, so here
 * starting a child process or listening on a socket throws, naming the test file and what it
 * started. Tests that start processes or servers (nats-server, PyTorch through python3, a `turnwise`
 * CLI, an HTTP server) belong in test/e2e/. Worker threads stay allowed: they are in-process.
 *
 * `test/layering/unit-tier.test.ts` checks the same rule statically, file by file; this catches
 * what a scan cannot see (a module that spawns a child on first use, such as the SQL sandbox).
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { expect } from 'vitest';

/** Set on `globalThis` once the guard is in place (the tier test checks it). */
export const UNIT_TIER_GUARD = Symbol.for('turnwise.unitTierGuard');

/** The error every guarded call throws. */
export class UnitTierProcessError extends Error {
  override readonly name = 'UnitTierProcessError';
}

function refuse(what: string): never {
  const file = expect.getState().testPath ?? 'a unit-tier test';
  throw new UnitTierProcessError(`${file} ${what}: the unit tier starts no processes or servers; move this test to test/e2e/ (docs/testing.md)`);
}

const SPAWNERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

const global = globalThis as Record<symbol, unknown>;
if (global[UNIT_TIER_GUARD] !== true) {
  const spawners = childProcess as unknown as Record<(typeof SPAWNERS)[number], (...args: unknown[]) => unknown>;
  for (const name of SPAWNERS) {
    spawners[name] = (command: unknown) => refuse(`called child_process.${name}(${JSON.stringify(command)})`);
  }
  // http, https and net servers all listen through net.Server.
  net.Server.prototype.listen = function listen(): never {
    return refuse('listened on a socket (net.Server.listen)');
  };
  // ESM `import { spawn } from 'node:child_process'` bindings follow the patched functions.
  syncBuiltinESMExports();
  global[UNIT_TIER_GUARD] = true;
}
