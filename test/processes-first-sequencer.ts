// The order test files start in: those that start processes or a browser first, then the
// rest as Vitest orders them (by the last run's durations when it has them, else larger files
// first). On a fresh clone Vitest has no durations, and files that spawn a server or chromium
// are small, so they came last and one of them ran on alone at the end while the other
// worker sat idle; they are also the files whose time varies most with the machine's load.
// docs/decisions.md "The suite's time".
import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** An import of the helpers that spawn processes or drive chromium, or of child_process. */
const STARTS_PROCESSES =
  /from '(?:\.\.\/)*(?:test\/|\.\/)(?:server-process|cli|browser)\.js'|from 'node:child_process'/;

function startsProcesses(file: string): boolean {
  try {
    return STARTS_PROCESSES.test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

export class ProcessesFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = sorted.filter((file) => startsProcesses(file.moduleId));
    return [...first, ...sorted.filter((file) => !first.includes(file))];
  }
}
