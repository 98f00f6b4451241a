import { defineConfig } from 'vitest/config';

// Tests are tiered by cost: unit (pure, milliseconds), contract (one shared suite per
// interface, run against every implementation), e2e (real processes, pools, servers) and learning
// (fixed seed, small budget, asserts the agent got better).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/contracts/**', 'test/e2e/**', 'test/learning/**'],
          // Starting a process or a server here throws (test/helpers/unit-tier-guard.ts).
          setupFiles: ['test/helpers/unit-tier-guard.ts'],
          testTimeout: 60_000,
        },
      },
      { test: { name: 'contract', include: ['test/contracts/**/*.test.ts'], testTimeout: 60_000 } },
      { test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 120_000 } },
      { test: { name: 'learning', include: ['test/learning/**/*.test.ts'], testTimeout: 600_000 } },
    ],
  },
});
