// Log lines written off the request thread. The request thread copies an access line's
// fields (or pino's formatted line) into a shared ring; a worker thread turns the records
// into JSON lines, byte by byte into one buffer, and writes them to stdout in batches
// (docs/decisions.md "The log written off the request thread").
//
// Every line of the process goes through the ring (pino's too), so stdout has one writer and
// lines keep their order. At exit the request thread waits (bounded) for the writer to write
// what is left; a SIGKILL can lose the last batch of lines (≤ 50 ms), never an acknowledged
// write (those are in the database). If the thread cannot run, lines are written from the
// request thread instead. A writer to a stream (a test's) has no thread: each record is
// written as it comes, through the same format.
import { writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { AccessEntry } from './access-log.js';
import * as logRing from './log-ring.js';
import {
  accessLineParts,
  type LogWriterData,
  readLogRecords,
  ringLayout,
  writeFully,
} from './log-ring.js';

const LAYOUT = ringLayout();
/** Room for ~30 000 access lines: the thread empties it every 50 ms at most. */
const THREAD_RING_BYTES = 4 * 1024 * 1024;
/** A writer without a thread empties its ring after every record. */
const STREAM_RING_BYTES = 1024 * 1024;
/** The most characters one line record holds: its bytes fit a batch's buffer. */
const LINE_RECORD_CHARS = Math.floor(LAYOUT.OUT_BYTES / 4 / 3);
/** An access line's strings are cut to this (Node's header limit keeps a URL far below). */
const ACCESS_FIELD_CHARS = 8 * 1024;
/** How long an exiting process waits for the thread to write what is left. */
const EXIT_WAIT_MS = 2000;

/** The thread's program: every function of log-ring.ts, from its own source. */
const WRITER_SOURCE = Object.values(logRing)
  .filter((value) => typeof value === 'function')
  .map(String)
  .concat(`runLogWriter(require('node:worker_threads').workerData, require('node:fs'));`)
  .join('\n');

/** Where lines go: a file descriptor (written by a thread), or a stream (written here). */
export type LogTarget = { fd: number } | { stream: NodeJS.WritableStream };

export class LogWriter {
  private readonly control: Int32Array;
  private readonly bytes: Buffer;
  // The header's fields through typed arrays (index = byte offset / size): cheaper on the
  // request thread than DataView's calls. Every field sits at a multiple of its size.
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  /** Where the next record goes (only this thread writes it). */
  private written = 0;
  /** READ as last seen: space up to it is free without asking again. */
  private read = 0;
  /** True when no thread writes (a stream, or the thread gone): each record is written here. */
  private inThread: boolean;
  private readonly worker: Worker | undefined;
  private readonly parts: ReturnType<typeof accessLineParts>;
  /** The buffer lines are formatted into when this thread writes them. */
  private out: Buffer | undefined;
  private readonly writeOut: (bytes: Buffer) => void;

  constructor(
    target: LogTarget = { fd: 1 },
    base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`,
  ) {
    this.inThread = 'stream' in target;
    const control = new SharedArrayBuffer(LAYOUT.CONTROL_WORDS * 4);
    const ring = new SharedArrayBuffer(this.inThread ? STREAM_RING_BYTES : THREAD_RING_BYTES);
    this.control = new Int32Array(control);
    this.bytes = Buffer.from(ring);
    this.u16 = new Uint16Array(ring);
    this.u32 = new Uint32Array(ring);
    this.f64 = new Float64Array(ring);
    this.parts = accessLineParts(base);
    if ('stream' in target) {
      const { stream } = target;
      this.writeOut = (bytes) => stream.write(bytes.toString('utf8'));
      return;
    }
    const { fd } = target;
    const pause = () => Atomics.wait(this.control, LAYOUT.PAUSE, 0, 1);
    this.writeOut = (bytes) => writeFully({ writeSync }, fd, bytes, pause);
    const data: LogWriterData = { control, ring, fd, base };
    this.worker = new Worker(WRITER_SOURCE, { eval: true, workerData: data });
    this.worker.unref();
    // A thread that failed or stopped leaves its lines to this one.
    this.worker.on('error', () => this.writeInThread());
    this.worker.on('exit', () => this.writeInThread());
    // A line logged by a later exit listener is written from this thread (close sets it so).
    process.once('exit', this.close);
  }

  /**
   * A whole line (pino's): the stream interface pino writes to. Line records are joined as
   * they are, so a line too long for one record goes in several.
   */
  write(line: string): boolean {
    for (let start = 0; start < line.length; ) {
      let end = Math.min(line.length, start + LINE_RECORD_CHARS);
      // Never between the two halves of a surrogate pair: each record is encoded alone.
      if (end < line.length && isHighSurrogate(line.charCodeAt(end - 1))) {
        end -= 1;
      }
      const part = start === 0 && end === line.length ? line : line.slice(start, end);
      const at = this.reserve(LAYOUT.LINE_HEADER + part.length * 3);
      const length = this.putString(part, at + LAYOUT.LINE_HEADER, part.length);
      this.bytes[at + 4] = LAYOUT.LINE;
      this.u32[(at >> 2) + 2] = length;
      this.publish(at, LAYOUT.LINE_HEADER + length);
      start = end;
    }
    return true;
  }

  /** An access line's fields, `time` its time (ms since the epoch). */
  access(entry: AccessEntry, time: number): void {
    const { reqId, method, route, url } = entry;
    // The path as access-log.ts's pathOf cuts it, counted instead of sliced (no new string).
    const query = url.indexOf('?');
    const pathChars = Math.min(query === -1 ? url.length : query, ACCESS_FIELD_CHARS);
    const routeChars = route === null ? 0 : Math.min(route.length, ACCESS_FIELD_CHARS);
    const reqIdChars = Math.min(reqId.length, ACCESS_FIELD_CHARS);
    const at = this.reserve(
      LAYOUT.ACCESS_HEADER + (reqIdChars + method.length + routeChars + pathChars) * 3,
    );
    const u32 = this.u32;
    const word = at >> 2;
    let end = at + LAYOUT.ACCESS_HEADER;
    let length = this.putString(reqId, end, reqIdChars);
    u32[word + 6] = length;
    end += length;
    length = this.putString(method, end, method.length);
    u32[word + 7] = length;
    end += length;
    length = route === null ? 0 : this.putString(route, end, routeChars);
    u32[word + 8] = length;
    end += length;
    length = this.putString(url, end, pathChars);
    u32[word + 9] = length;
    end += length;
    this.bytes[at + 4] = LAYOUT.ACCESS;
    this.bytes[at + 5] = route === null ? 0 : 1;
    this.u16[(at >> 1) + 3] = entry.status;
    this.f64[(at >> 3) + 1] = time;
    this.f64[(at >> 3) + 2] = entry.ms;
    this.publish(at, end - at);
  }

  /**
   * Writes the first `chars` characters of `text` at `at` as UTF-8 and returns the byte
   * count. ASCII (every request id, method and route, nearly every path) is copied by a loop
   * the JIT compiles to a few instructions a character; anything else by Buffer's encoder.
   */
  private putString(text: string, at: number, chars: number): number {
    const bytes = this.bytes;
    for (let i = 0; i < chars; i++) {
      const code = text.charCodeAt(i);
      if (code > 0x7f) {
        return bytes.write(text.slice(0, chars), at, 'utf8');
      }
      bytes[at + i] = code;
    }
    return chars;
  }

  /** The offset of `bound` contiguous free bytes (bound: the record's largest size). */
  private reserve(bound: number): number {
    // Lines are split, and an access record's strings cut, to well under a quarter of it.
    const size = align(bound);
    for (;;) {
      const written = this.written;
      if (this.read > written) {
        if (written + size < this.read) {
          return written;
        }
      } else if (written + size < this.bytes.length) {
        return written;
      } else if (size < this.read) {
        // No room before the end: the reader skips to 0 at the zero length.
        this.u32[written >> 2] = 0;
        this.written = 0;
        return 0;
      }
      this.waitForSpace();
    }
  }

  private publish(at: number, length: number): void {
    const size = align(length);
    this.u32[at >> 2] = size;
    this.written = at + size;
    Atomics.store(this.control, LAYOUT.WRITTEN, this.written);
    if (this.inThread) {
      this.drain();
    } else if (Atomics.load(this.control, LAYOUT.ASLEEP) === 1) {
      Atomics.notify(this.control, LAYOUT.WRITTEN);
    }
  }

  /**
   * The ring is full: its reader is behind (stdout's reader is slow). The request thread
   * waits for room, as a synchronous logger would, rather than hold an unbounded backlog.
   */
  private waitForSpace(): void {
    if (Atomics.load(this.control, LAYOUT.STOPPED) === 1) {
      // The thread is gone (its exit event cannot arrive while this thread waits here).
      this.inThread = true;
    }
    if (this.inThread) {
      this.drain();
      return;
    }
    const seen = Atomics.load(this.control, LAYOUT.READ);
    if (seen === this.read) {
      Atomics.notify(this.control, LAYOUT.WAKE);
      Atomics.wait(this.control, LAYOUT.READ, seen, 100);
    }
    this.read = Atomics.load(this.control, LAYOUT.READ);
  }

  /** Writes every record not yet read, from this thread. */
  private drain(): void {
    const from = Atomics.load(this.control, LAYOUT.READ);
    const to = Atomics.load(this.control, LAYOUT.WRITTEN);
    if (from === to) {
      return;
    }
    this.out ??= Buffer.allocUnsafe(LAYOUT.OUT_BYTES);
    readLogRecords(this.bytes, from, to, this.parts, this.out, this.writeOut);
    Atomics.store(this.control, LAYOUT.READ, to);
    this.read = to;
  }

  private writeInThread(): void {
    this.inThread = true;
    this.drain();
  }

  /**
   * Writes what is waiting and stops the thread (at exit, or when a test is done with it):
   * the thread writes what is left; if it does not in time, this thread does. Lines written
   * after it are written from this thread.
   */
  readonly close = (): void => {
    process.removeListener('exit', this.close);
    // A thread that has not started yet (it may wait on this one: an exit right after start)
    // never will; this thread writes everything.
    const started = Atomics.compareExchange(this.control, LAYOUT.OWNER, 0, 2) === 1;
    if (started && !this.inThread) {
      Atomics.store(this.control, LAYOUT.CLOSING, 1);
      const deadline = Date.now() + EXIT_WAIT_MS;
      while (Atomics.load(this.control, LAYOUT.DRAINED) !== 1 && Date.now() < deadline) {
        Atomics.notify(this.control, LAYOUT.WAKE);
        Atomics.notify(this.control, LAYOUT.WRITTEN);
        Atomics.wait(this.control, LAYOUT.DRAINED, 0, 20);
      }
    }
    // Nothing is left if the thread drained the ring; what is, this thread writes.
    this.writeInThread();
  };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function align(length: number): number {
  return (length + LAYOUT.ALIGN - 1) & ~(LAYOUT.ALIGN - 1);
}
