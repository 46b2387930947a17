import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/sdk/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core
    // machine, where much of a test file's time is spent waiting on a server process, a
    // database or a browser. One worker per core keeps both cores busy.
    maxWorkers: Math.max(2, availableParallelism()),
    // A worker keeps the modules it imported from one test file to the next (every file still
    // builds its own app on its own database): importing the app per file was a sixth of the
    // suite's CPU. Test files must not leave process-wide changes behind (restore spies).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
