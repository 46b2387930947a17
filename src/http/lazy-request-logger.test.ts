import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLoggerFactory } from './lazy-request-logger.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info', redact: ['*.password'] }, stream) };
}

describe('the lazy request logger', () => {
  it('writes what a pino child would: its bindings, levels, redaction, children', () => {
    const { lines, logger } = capture();
    const parent = logger as unknown as FastifyBaseLogger;
    const lazy = lazyChildLoggerFactory.call(
      undefined as never,
      parent,
      { reqId: 'req-1' },
      {},
      undefined as never,
    );
    const eager = parent.child({ reqId: 'req-1' });
    for (const log of [lazy, eager]) {
      log.debug('below the level');
      log.info({ body: { password: 'hunter2' } }, 'hello %s', 'there');
      log.error(new Error('boom'));
      log.child({ step: 'inner' }).warn('from a child');
    }
    const strip = ({ time, pid, hostname, ...rest }: Record<string, unknown>) => ({
      ...rest,
      err: rest.err ? { message: (rest.err as { message: string }).message } : undefined,
    });
    const fromLazy = lines.slice(0, 3).map(strip);
    const fromEager = lines.slice(3).map(strip);
    expect(fromLazy).toEqual(fromEager);
    expect(fromLazy[0]).toMatchObject({
      reqId: 'req-1',
      msg: 'hello there',
      body: { password: '[Redacted]' },
    });
    expect(fromLazy[2]).toMatchObject({ reqId: 'req-1', step: 'inner', msg: 'from a child' });
    expect(lazy.level).toBe('info');
    lazy.level = 'debug';
    lazy.debug('now above it');
    expect(lines.at(-1)).toMatchObject({ reqId: 'req-1', level: 20, msg: 'now above it' });
  });
});
