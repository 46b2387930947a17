// Builds the server: every src/**/*.ts (tests excepted) transpiled to dist/**/*.js with
// esbuild, one file at a time (isolatedModules and verbatimModuleSyntax make that exact).
// Type checking is `npm run typecheck`, not the build's job, so a start stays fast.
//
// `--if-changed` (what `npm start` and the test suite use) skips the work when nothing the
// output depends on changed since the last build: the sources (path, size, mtime), the
// tsconfig, the lockfile and this script, fingerprinted into dist/.build-fingerprint.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
const FINGERPRINT = join(DIST, '.build-fingerprint');
const INPUTS = ['tsconfig.json', 'package-lock.json', 'scripts/build.mjs'];
/** The console (CONTRACT.md §10.3): bundled with the SDK's source into dist/console. */
const CONSOLE = join(ROOT, 'console');
const CONSOLE_OUT = join(DIST, 'console');
const SDK_SRC = join(ROOT, 'packages', 'sdk', 'src');

function sourcesUnder(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      found.push(...sourcesUnder(path));
    } else if (/\.(ts|tsx|css|html)$/.test(entry.name) && !entry.name.endsWith('.test.ts')) {
      found.push(path);
    }
  }
  return found.sort();
}

function fingerprintOf(sources) {
  const hash = createHash('sha256');
  for (const path of [...sources, ...INPUTS.map((input) => join(ROOT, input))]) {
    const stat = statSync(path);
    hash.update(`${relative(ROOT, path)}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Outputs left over from sources that no longer exist. */
function removeStale(expected) {
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (/\.js(\.map)?$/.test(entry.name) && !expected.has(path.replace(/\.map$/, ''))) {
        rmSync(path);
      }
    }
  };
  if (existsSync(DIST)) {
    walk(DIST);
  }
}

/**
 * The console: one minified ES module (Preact, the SDK, the screens) and its stylesheet,
 * served by the API from dist/console (no CDN, no inline script).
 */
async function buildConsole(build) {
  await build({
    entryPoints: [join(CONSOLE, 'src', 'main.tsx')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    minify: true,
    sourcemap: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    alias: { '@haven/sdk': join(SDK_SRC, 'index.ts') },
    outfile: join(CONSOLE_OUT, 'console.js'),
    logLevel: 'silent',
  });
  writeFileSync(join(CONSOLE_OUT, 'console.css'), readFileSync(join(CONSOLE, 'console.css')));
  writeFileSync(join(CONSOLE_OUT, 'index.html'), readFileSync(join(CONSOLE, 'index.html')));
  return [join(CONSOLE_OUT, 'console.js')];
}

export async function buildServer({ ifChanged = false } = {}) {
  const started = performance.now();
  const serverSources = sourcesUnder(SRC).filter((path) => path.endsWith('.ts'));
  const sources = [...serverSources, ...sourcesUnder(CONSOLE), ...sourcesUnder(SDK_SRC)];
  const fingerprint = fingerprintOf(sources);
  if (ifChanged && existsSync(FINGERPRINT) && readFileSync(FINGERPRINT, 'utf8') === fingerprint) {
    return { built: false, files: sources.length, ms: performance.now() - started };
  }
  // Loaded only when there is work: a start with nothing changed pays for no compiler.
  const { transform, build } = await import('esbuild');
  const outputs = new Set();
  await Promise.all(
    serverSources.map(async (source) => {
      const out = join(DIST, relative(SRC, source)).replace(/\.ts$/, '.js');
      const result = await transform(readFileSync(source, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        sourcemap: 'external',
        sourcefile: relative(dirname(out), source),
      });
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${result.code}//# sourceMappingURL=${out.split('/').pop()}.map\n`);
      writeFileSync(`${out}.map`, result.map);
      outputs.add(out);
    }),
  );
  for (const out of await buildConsole(build)) {
    outputs.add(out);
  }
  removeStale(outputs);
  writeFileSync(FINGERPRINT, fingerprint);
  return { built: true, files: sources.length, ms: performance.now() - started };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await buildServer({ ifChanged: process.argv.includes('--if-changed') });
  if (result.built) {
    process.stderr.write(`haven: built ${result.files} files in ${Math.round(result.ms)} ms\n`);
  }
}
