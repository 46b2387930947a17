import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../test/tcp-proxy.js';
import { createWriteBehind, type WriteBehind } from './write-behind.js';

function memoryLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return {
    log: pino({ level: 'info' }, stream),
    messages: () => lines.map((l) => JSON.parse(l).msg),
  };
}

describe('write-behind batches', () => {
  let open: WriteBehind<number> | undefined;
  afterEach(async () => {
    await open?.close().catch(() => {});
  });

  function counter(write: (batch: ReadonlyMap<string, number>) => Promise<void>) {
    const logs = memoryLog();
    open = createWriteBehind<number>({
      what: 'test counts',
      everyMs: 3_600_000, // the test flushes by hand
      flushAt: 10,
      maxEntries: 20,
      merge: (older, newer) => older + newer,
      write,
      log: logs.log,
    });
    return { batch: open, logs };
  }

  it('writes early once flushAt ids wait, without waiting for the timer', async () => {
    const written: Array<Map<string, number>> = [];
    const { batch } = counter(async (b) => {
      written.push(new Map(b));
    });
    for (let i = 0; i < 9; i++) {
      batch.add(`id-${i}`, 1);
    }
    expect(written).toHaveLength(0);
    batch.add('id-9', 1);
    await eventually(async () => written.length === 1, 'the early flush');
    expect(written[0]?.size).toBe(10);
    expect(batch.size).toBe(0);
  });

  it('keeps and merges what a failed write held, bounds new ids, and reports the drops once writing again', async () => {
    let failing = true;
    const totals = new Map<string, number>();
    const { batch, logs } = counter(async (b) => {
      if (failing) {
        throw new Error('database away');
      }
      for (const [id, n] of b) {
        totals.set(id, (totals.get(id) ?? 0) + n);
      }
    });
    for (let i = 0; i < 5; i++) {
      batch.add('kept', 1);
    }
    await batch.flush(); // fails: the 5 stay held
    batch.add('kept', 2);
    for (let i = 0; i < 100; i++) {
      batch.add(`new-${i}`, 1);
    }
    // 'kept' plus 19 new ids fill the bound of 20; the other 81 new ids are dropped.
    expect(batch.size).toBe(20);
    expect(logs.messages().filter((m) => m.includes('bound reached'))).toHaveLength(1);

    failing = false;
    await batch.flush();
    expect(totals.get('kept')).toBe(7);
    expect(totals.size).toBe(20);
    expect(logs.messages()).toContain('test counts: writing again; ids dropped meanwhile');
    expect(batch.size).toBe(0);
  });
});
