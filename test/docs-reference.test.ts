// The docs describe the system as it is, and the code cites them by decision title: no diary
// of passes in docs/ or the README, no issue numbers in the code's comments, and every
// `decisions.md "Title"` cited anywhere names a heading that exists.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const ORDINALS =
  'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|' +
  'thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth';
const DIARY = new RegExp(`\\b(?:${ORDINALS}|\\d+(?:st|nd|rd|th)) pass\\b`, 'i');
const ISSUE_NUMBER = /(?:\(|\b)issue \d+/i;
const SOURCE = /\.(?:ts|tsx|mjs|mts|js)$/;

/** Every file below `dir` whose name matches, node_modules, dist and generated code aside. */
function filesIn(dir: string, name: RegExp): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((entry) => {
    const path = join(dir, entry);
    if (['node_modules', 'dist', 'generated'].includes(entry)) {
      return [];
    }
    if (statSync(join(ROOT, path)).isDirectory()) {
      return filesIn(path, name);
    }
    return name.test(entry) ? [path] : [];
  });
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Lines of `files` that match `pattern`, as `path:line: text`. */
function linesMatching(files: string[], pattern: RegExp): string[] {
  return files.flatMap((path) =>
    read(path)
      .split('\n')
      .flatMap((line, at) => (pattern.test(line) ? [`${path}:${at + 1}: ${line.trim()}`] : [])),
  );
}

const CODE = ['src', 'test', 'bench', 'scripts', 'console/src', 'packages/sdk/src'].flatMap((dir) =>
  filesIn(dir, SOURCE),
);
const DOCS = [...filesIn('docs', /\.md$/), 'README.md'];
/** This file, whose patterns and examples are what it looks for. */
const OWN = relative(ROOT, new URL(import.meta.url).pathname);
const CITING = [...CODE, ...DOCS].filter((path) => path !== OWN);

describe('docs as reference', () => {
  it('docs and the README tell no diary of passes', () => {
    expect(linesMatching(DOCS, DIARY)).toEqual([]);
  });

  it('code comments cite decisions by title, not issue numbers', () => {
    const own = relative(ROOT, new URL(import.meta.url).pathname);
    expect(
      linesMatching(
        CODE.filter((path) => path !== own),
        ISSUE_NUMBER,
      ),
    ).toEqual([]);
  });

  it('every decision title the code and docs cite is a heading of decisions.md', () => {
    const headings = new Set(
      read('docs/decisions.md')
        .split('\n')
        .filter((line) => /^#{2,3} /.test(line))
        .map((line) => line.replace(/^#+ /, '').trim()),
    );
    const missing = CITING.flatMap((path) => {
      // A citation may wrap over comment lines: read the file as one line of prose.
      const prose = read(path)
        .replace(/^\s*(?:\/\/|\*|\/\*\*?)\s?/gm, '')
        .replace(/\s+/g, ' ');
      return [...prose.matchAll(/decisions\.md,? \(?"([^"]+)"/g)]
        .map((match) => match[1] as string)
        .filter((title) => !headings.has(title))
        .map((title) => `${path}: "${title}"`);
    });
    expect(missing).toEqual([]);
  });
});
