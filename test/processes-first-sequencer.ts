// The order test files start in. First the flood of 100 000 requests (PostgreSQL only, minutes
// on its own), so the other worker takes everything else meanwhile. Then the files that start
// processes or a browser: on a fresh clone Vitest has no durations to sort by (it runs larger
// files first), and these small files came last, one running on alone at the end while the
// other worker sat idle; their time also varies most with the machine's load. Then the rest,
// as Vitest orders them. docs/decisions.md "The suite's time".
import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The file that runs for minutes (decisions.md "Why the flood test runs on PostgreSQL only"). */
const LONGEST = /\/test\/bounded-memory\.test\.ts$/;

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
    const longest = sorted.filter((file) => LONGEST.test(file.moduleId));
    const processes = sorted.filter(
      (file) => !longest.includes(file) && startsProcesses(file.moduleId),
    );
    return [
      ...longest,
      ...processes,
      ...sorted.filter((file) => !longest.includes(file) && !processes.includes(file)),
    ];
  }
}
