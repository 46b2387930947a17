// The log writer's thread: every line written reaches the file whole and in order, through
// the ring's wrap and a full ring, with any characters, when the thread is gone, and when the
// process exits at once (dist/, the build's own source text in the thread).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccessLog } from './access-log.js';
import { LogWriter } from './log-writer.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const BASE = ',"pid":1,"hostname":"test"';
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A writer to a fresh file, and a way to read what reached the file once it is closed. */
function writerToFile() {
  const dir = mkdtempSync(join(tmpdir(), 'haven-log-writer-'));
  dirs.push(dir);
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'w');
  const writer = new LogWriter({ fd }, BASE);
  return {
    writer,
    /** Closes the writer (it writes what is waiting first) and reads the file's lines. */
    lines(): string[] {
      writer.close();
      closeSync(fd);
      const text = readFileSync(path, 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      return text.slice(0, -1).split('\n');
    },
  };
}

const entry = (n: number, url = `/v1/families/${n}?secret=x`) => ({
  reqId: `req-${n}`,
  method: 'GET',
  route: n % 2 === 0 ? '/v1/families/:familyId' : null,
  url,
  status: 200 + (n % 300),
  ms: n / 1000,
});

describe('LogWriter', () => {
  it('writes access lines and whole lines in the order they were given', () => {
    const { writer, lines } = writerToFile();
    const access = createAccessLog('info', writer);
    const before = Date.now();
    access.write(entry(2));
    writer.write('{"level":40,"msg":"between"}\n');
    access.write(entry(3));
    const [first, between, third, ...rest] = lines().map((line) => JSON.parse(line));
    expect(rest).toEqual([]);
    expect(first).toEqual({
      level: 30,
      time: first.time,
      pid: 1,
      hostname: 'test',
      reqId: 'req-2',
      method: 'GET',
      route: '/v1/families/:familyId',
      path: '/v1/families/2',
      status: 202,
      ms: 0,
      msg: 'request completed',
    });
    expect(first.time).toBeGreaterThanOrEqual(before);
    expect(first.time).toBeLessThanOrEqual(Date.now());
    expect(between).toEqual({ level: 40, msg: 'between' });
    expect(third).toMatchObject({ reqId: 'req-3', route: null, path: '/v1/families/3', ms: 0 });
  });

  it('writes any character of a path or request id as JSON.stringify would', () => {
    const { writer, lines } = writerToFile();
    const access = createAccessLog('info', writer);
    const controls = Array.from({ length: 32 }, (_, code) => String.fromCharCode(code)).join('');
    const odd = ['/é/ü', '/"quoted"/\\back', '/😀/tab\there', `/${controls}\u007f/ÿ`, ''];
    const times: number[] = [];
    for (const [n, path] of odd.entries()) {
      times.push(Date.now());
      access.write({ ...entry(n), reqId: `id"${path}`, url: `${path}?q=1`, ms: 1234.5 + n });
    }
    writer.write('{"msg":"😀 ünïcode"}\n');
    const written = lines();
    const expected = odd.map(
      (path, n) =>
        `{"level":30,"time":${JSON.parse(written[n] as string).time}${BASE},` +
        `"reqId":${JSON.stringify(`id"${path}`)},"method":"GET",` +
        `"route":${n % 2 === 0 ? '"/v1/families/:familyId"' : 'null'},` +
        `"path":${JSON.stringify(path)},"status":${200 + n},"ms":${1234.5 + n},` +
        '"msg":"request completed"}',
    );
    expect(written).toEqual([...expected, '{"msg":"😀 ünïcode"}']);
    for (const [n, time] of times.entries()) {
      expect(JSON.parse(written[n] as string).time).toBeGreaterThanOrEqual(time);
    }
  });

  it('writes the duration in hundredths as String(Math.round(ms * 100) / 100)', () => {
    const { writer, lines } = writerToFile();
    const access = createAccessLog('info', writer);
    const durations = [0, 0.004, 0.005, 0.05, 0.1, 0.29, 1, 6.25, 10.1, 99.999, 12345.67, 3e6];
    for (const ms of durations) {
      access.write({ ...entry(1), ms });
    }
    expect(lines().map((line) => line.match(/"ms":([^,]*),/)?.[1])).toEqual(
      durations.map((ms) => String(Math.round(ms * 100) / 100)),
    );
  });

  it('writes to a stream from the request thread, each record as it comes', () => {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    const writer = new LogWriter({ stream }, BASE);
    createAccessLog('info', writer).write(entry(4));
    writer.write('{"msg":"next"}\n');
    expect(chunks.map((chunk) => JSON.parse(chunk))).toMatchObject([
      { reqId: 'req-4', path: '/v1/families/4', status: 204 },
      { msg: 'next' },
    ]);
  });

  it('loses nothing when the ring fills and wraps many times over', () => {
    const { writer, lines } = writerToFile();
    const access = createAccessLog('info', writer);
    // ~110 bytes a record: 200 000 of them pass through the 4 MB ring five times.
    const count = 200_000;
    for (let n = 0; n < count; n++) {
      access.write(entry(n));
    }
    const written = lines();
    expect(written).toHaveLength(count);
    expect(written.map((line) => JSON.parse(line).reqId)).toEqual(
      Array.from({ length: count }, (_, n) => `req-${n}`),
    );
  });

  it('writes a line longer than a record allows whole', () => {
    const { writer, lines } = writerToFile();
    const long = `{"msg":"${'é😀x'.repeat(800_000)}"}\n`;
    writer.write(long);
    writer.write('{"msg":"after"}\n');
    expect(lines()).toEqual([long.slice(0, -1), '{"msg":"after"}']);
  });

  it('writes from the request thread once the writer thread is gone', async () => {
    const { writer, lines } = writerToFile();
    const thread = (writer as unknown as { worker: Worker }).worker;
    const exited = new Promise((resolve) => thread.once('exit', resolve));
    await thread.terminate();
    await exited;
    writer.write('{"msg":"one"}\n');
    writer.write('{"msg":"two"}\n');
    expect(lines()).toEqual(['{"msg":"one"}', '{"msg":"two"}']);
  });

  it('writes every line of a process that exits at once (the built dist/)', () => {
    const program = `
      import { LogWriter } from ${JSON.stringify(join(ROOT, 'dist/http/log-writer.js'))};
      const writer = new LogWriter();
      for (let n = 0; n < 5000; n++) writer.write('{"n":' + n + '}\\n');
      process.exit(0);
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', program], {
      encoding: 'utf8',
    });
    const numbers = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).n);
    expect(numbers).toEqual(Array.from({ length: 5000 }, (_, n) => n));
  });
});
