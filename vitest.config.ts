import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { ProcessesFirstSequencer } from './test/processes-first-sequencer.js';

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
    // The runner's timeouts only catch a hang: what a test expects to happen in time it says
    // itself, with a deadline on the wait (`eventually`, `waitForLine`) or on the clock it
    // moves. A test's own work (building an app, starting a process, a property test's runs)
    // takes several times longer on a loaded 2-core machine than on an idle one, and must not
    // fail for that (docs/decisions.md "The suite's time").
    testTimeout: 120_000,
    hookTimeout: 120_000,
    sequence: { sequencer: ProcessesFirstSequencer },
    reporters: ['default'],
  },
});
