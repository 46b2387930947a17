// The log ring's layout, its reader and the access line's format. Everything here is also
// run in the log writer's thread from its source text (log-writer.ts passes every function
// exported here to a Worker as code), so no function may use an import, a module-level name
// or another function except through its parameters and the others of this file. A test
// runs the thread from the source text the build produces.
//
// The ring is a SharedArrayBuffer the request thread writes records into and the writer
// thread reads them out of. Records are aligned to 8 bytes and never wrap: one that does not
// fit before the end is written at 0 after a zero length (the wrap marker). Fields are
// written and read through typed arrays (the platform's byte order: both sides are one
// process), each at a multiple of its own size.
//
//   access record: u32 length, u8 kind = 1, u8 has route, u16 status, f64 time (ms since the
//     epoch), f64 ms (duration), u32 × 4 byte lengths of request id, method, route, path;
//     then those four strings' UTF-8 bytes.
//   line record: u32 length, u8 kind = 2, …, u32 at 8 byte length; from 12 the UTF-8 bytes
//     of a whole line (pino's own lines, already formatted).

/** Indexes of the control words, record kinds and sizes (one place for both threads). */
export function ringLayout() {
  return {
    /** Byte offset the request thread has written up to (published after each record). */
    WRITTEN: 0,
    /** Byte offset the writer thread has read up to (space before it may be reused). */
    READ: 1,
    /** 1 while the writer thread sleeps until WRITTEN moves (the request thread wakes it). */
    ASLEEP: 2,
    /** Waited on by the writer between batches; notified to cut the wait short. */
    WAKE: 3,
    /** 1 once the process is exiting: the writer writes what is left and acknowledges. */
    CLOSING: 4,
    /** 1 once the writer has written everything up to WRITTEN after CLOSING. */
    DRAINED: 5,
    /**
     * Who writes the ring's lines: 0 nobody yet, 1 the thread (set when it starts), 2 the
     * request thread (set by a close before the thread started, which then never writes).
     */
    OWNER: 6,
    /** 1 once the thread's loop has ended, however it ended: its lines are this thread's. */
    STOPPED: 7,
    /** Never set: waited on for a short pause. */
    PAUSE: 8,
    CONTROL_WORDS: 9,
    ACCESS: 1,
    LINE: 2,
    ACCESS_HEADER: 40,
    LINE_HEADER: 12,
    ALIGN: 8,
    /** Lines wait at most this long for company before they are written. */
    BATCH_MS: 50,
    /** The lines of a batch are written from a buffer of this size, in as many writes. */
    OUT_BYTES: 1024 * 1024,
  } as const;
}

/**
 * Writes `src[start, end)` (UTF-8) at `out[o]` as a JSON string, escaped as JSON.stringify
 * escapes a string (`"`, `\`, and the control characters, with its short forms), and
 * returns the offset after it. UTF-8 holds no lone surrogate, JSON.stringify's one other
 * escape: the request thread's encoder wrote any as U+FFFD (a URL, a request id and a route
 * have none: Node reads a URL as Latin-1, and the others are ASCII).
 */
export function writeJsonString(
  src: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  at: number,
): number {
  let o = at;
  out[o++] = 0x22;
  for (let i = start; i < end; i++) {
    const byte = src[i] as number;
    if (byte >= 0x20 && byte !== 0x22 && byte !== 0x5c) {
      out[o++] = byte;
      continue;
    }
    out[o++] = 0x5c;
    const short = shortEscape(byte);
    if (short !== 0) {
      out[o++] = short;
    } else {
      // \u00XX, lower-case hex.
      out[o++] = 0x75;
      out[o++] = 0x30;
      out[o++] = 0x30;
      out[o++] = byte < 0x10 ? 0x30 : 0x31;
      const low = byte & 0x0f;
      out[o++] = low < 10 ? 0x30 + low : 0x57 + low;
    }
  }
  out[o++] = 0x22;
  return o;
}

/** The letter of JSON.stringify's two-character escape of `byte` (`\n`…), 0 if none. */
export function shortEscape(byte: number): number {
  switch (byte) {
    case 0x22:
    case 0x5c:
      return byte;
    case 0x08:
      return 0x62;
    case 0x0c:
      return 0x66;
    case 0x0a:
      return 0x6e;
    case 0x0d:
      return 0x72;
    case 0x09:
      return 0x74;
    default:
      return 0;
  }
}

/** Writes a whole number ≥ 0 in decimal at `out[at]`; returns the offset after it. */
export function writeWholeNumber(value: number, out: Uint8Array, at: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) {
    digits++;
  }
  let rest = value;
  for (let i = at + digits - 1; i >= at; i--) {
    out[i] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}

/** The constant parts of an access line, as bytes (`base` is pino's `,"pid":…,"hostname":…`). */
export function accessLineParts(base: string) {
  return {
    time: Buffer.from('{"level":30,"time":'),
    reqId: Buffer.from(`${base},"reqId":`),
    method: Buffer.from(',"method":'),
    route: Buffer.from(',"route":'),
    null: Buffer.from('null'),
    path: Buffer.from(',"path":'),
    status: Buffer.from(',"status":'),
    ms: Buffer.from(',"ms":'),
    end: Buffer.from(',"msg":"request completed"}\n'),
  };
}

/**
 * Turns the records from `from` up to `to` into lines in `out`, handing `out`'s bytes to
 * `write` whenever the next line might not fit, and at the end. An access line is the shape
 * pino gives the app's own lines; the path was copied without its query.
 */
export function readLogRecords(
  ring: Buffer,
  from: number,
  to: number,
  parts: ReturnType<typeof accessLineParts>,
  out: Buffer,
  write: (bytes: Buffer) => void,
): void {
  const layout = ringLayout();
  // Fields are read as written: through typed arrays, in the platform's byte order.
  const u16 = new Uint16Array(ring.buffer, ring.byteOffset, ring.length >> 1);
  const u32 = new Uint32Array(ring.buffer, ring.byteOffset, ring.length >> 2);
  const f64 = new Float64Array(ring.buffer, ring.byteOffset, ring.length >> 3);
  let o = 0;
  let at = from;
  while (at !== to) {
    const word = at >> 2;
    const length = u32[word] as number;
    if (length === 0) {
      at = 0;
      continue;
    }
    // The most bytes its line can take (an access line's strings with every byte escaped as
    // \u00XX): if they might not fit, what is in `out` is written first.
    const bound =
      ring[at + 4] === layout.ACCESS
        ? 256 +
          parts.reqId.length +
          6 *
            ((u32[word + 6] as number) +
              (u32[word + 7] as number) +
              (u32[word + 8] as number) +
              (u32[word + 9] as number))
        : (u32[word + 2] as number);
    if (o + bound > out.length) {
      write(out.subarray(0, o));
      o = 0;
    }
    if (ring[at + 4] === layout.ACCESS) {
      const reqIdStart = at + layout.ACCESS_HEADER;
      const methodStart = reqIdStart + (u32[word + 6] as number);
      const routeStart = methodStart + (u32[word + 7] as number);
      const pathStart = routeStart + (u32[word + 8] as number);
      const pathEnd = pathStart + (u32[word + 9] as number);
      out.set(parts.time, o);
      o = writeWholeNumber(f64[(at >> 3) + 1] as number, out, o + parts.time.length);
      out.set(parts.reqId, o);
      o = writeJsonString(ring, reqIdStart, methodStart, out, o + parts.reqId.length);
      out.set(parts.method, o);
      o = writeJsonString(ring, methodStart, routeStart, out, o + parts.method.length);
      out.set(parts.route, o);
      o += parts.route.length;
      if (ring[at + 5] === 1) {
        o = writeJsonString(ring, routeStart, pathStart, out, o);
      } else {
        out.set(parts.null, o);
        o += parts.null.length;
      }
      out.set(parts.path, o);
      o = writeJsonString(ring, pathStart, pathEnd, out, o + parts.path.length);
      out.set(parts.status, o);
      o = writeWholeNumber(u16[(at >> 1) + 3] as number, out, o + parts.status.length);
      out.set(parts.ms, o);
      o += parts.ms.length;
      // Hundredths, written as String(Math.round(ms * 100) / 100) would write them.
      const hundredths = Math.round((f64[(at >> 3) + 2] as number) * 100);
      o = writeWholeNumber(Math.floor(hundredths / 100), out, o);
      const fraction = hundredths % 100;
      if (fraction !== 0) {
        out[o++] = 0x2e;
        out[o++] = 0x30 + Math.floor(fraction / 10);
        if (fraction % 10 !== 0) {
          out[o++] = 0x30 + (fraction % 10);
        }
      }
      out.set(parts.end, o);
      o += parts.end.length;
    } else {
      const start = at + layout.LINE_HEADER;
      const end = start + (u32[word + 2] as number);
      out.set(ring.subarray(start, end), o);
      o += end - start;
    }
    at += length;
  }
  if (o > 0) {
    write(out.subarray(0, o));
  }
}

/** What the writer thread is given (workerData). */
export interface LogWriterData {
  control: SharedArrayBuffer;
  ring: SharedArrayBuffer;
  fd: number;
  base: string;
}

/** The part of node:fs the writers use (the thread is handed it: it has no imports). */
export interface WriteFs {
  writeSync(fd: number, buffer: Uint8Array, offset: number): number;
}

/**
 * Writes all of `bytes` to `fd`. A non-blocking pipe that is full (its reader is behind) is
 * tried again after `pause`; any other failure (the reader gone) drops the rest: nothing
 * that writes a log may wait on a log nobody reads.
 */
export function writeFully(fs: WriteFs, fd: number, bytes: Uint8Array, pause: () => void): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(fd, bytes, offset);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EAGAIN') {
        return;
      }
      pause();
    }
  }
}

/**
 * The writer thread: waits for records, turns them into lines and writes them to `fd` in
 * batches (at most BATCH_MS apart), until the process exits.
 */
export function runLogWriter(data: LogWriterData, fs: WriteFs): void {
  const layout = ringLayout();
  const control = new Int32Array(data.control);
  const ring = Buffer.from(data.ring);
  const parts = accessLineParts(data.base);
  const out = Buffer.allocUnsafe(layout.OUT_BYTES);
  const pause = () => Atomics.wait(control, layout.PAUSE, 0, 1);
  const write = (bytes: Buffer) => writeFully(fs, data.fd, bytes, pause);
  if (Atomics.compareExchange(control, layout.OWNER, 0, 1) !== 0) {
    return;
  }
  try {
    let read = Atomics.load(control, layout.READ);
    for (;;) {
      const written = Atomics.load(control, layout.WRITTEN);
      if (written === read) {
        if (Atomics.load(control, layout.CLOSING) === 1) {
          Atomics.store(control, layout.DRAINED, 1);
          Atomics.notify(control, layout.DRAINED);
          return;
        }
        Atomics.store(control, layout.ASLEEP, 1);
        // Returns at once if WRITTEN moved since it was read: a record published before the
        // request thread could see ASLEEP is not missed.
        Atomics.wait(control, layout.WRITTEN, read);
        Atomics.store(control, layout.ASLEEP, 0);
        continue;
      }
      readLogRecords(ring, read, written, parts, out, write);
      // Only once written is the space given back (and the request thread's wait ended).
      read = written;
      Atomics.store(control, layout.READ, read);
      Atomics.notify(control, layout.READ);
      if (Atomics.load(control, layout.CLOSING) !== 1) {
        Atomics.wait(control, layout.WAKE, 0, layout.BATCH_MS);
      }
    }
  } finally {
    // A request thread waiting for room must not wait on a loop that ended (a bug's throw).
    Atomics.store(control, layout.STOPPED, 1);
    Atomics.notify(control, layout.READ);
  }
}
