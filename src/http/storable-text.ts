// PostgreSQL cannot store U+0000 in text or jsonb (the write fails, which would surface as a
// 500), and an unpaired UTF-16 surrogate has no UTF-8 form (the driver would silently store
// U+FFFD instead, changing the data). Both are refused up front, for every string of a JSON
// body, keys included, with the field named.
import type { FastifyInstance } from 'fastify';
import { BadRequestError } from './errors.js';

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function problemOf(text: string): string | undefined {
  if (text.includes('\u0000')) {
    return 'must not contain NUL characters';
  }
  if (UNPAIRED_SURROGATE.test(text)) {
    return 'must not contain unpaired surrogates';
  }
  return undefined;
}

function childName(parent: string, key: string | number): string {
  if (typeof key === 'number') {
    return `${parent}[${key}]`;
  }
  return parent ? `${parent}.${key}` : key;
}

/** The message for the first string of `value` that cannot be stored, if any. */
export function unstorableTextIn(value: unknown): string | undefined {
  // An explicit stack: a body nested thousands deep must not overflow the call stack.
  const pending: Array<{ value: unknown; name: string }> = [{ value, name: '' }];
  while (pending.length > 0) {
    const { value: current, name } = pending.pop() as { value: unknown; name: string };
    if (typeof current === 'string') {
      const problem = problemOf(current);
      if (problem) {
        return `${name || 'request body'} ${problem}`;
      }
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => {
        pending.push({ value: item, name: childName(name, index) });
      });
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const keyProblem = problemOf(key);
        if (keyProblem) {
          return `${name ? `${name} ` : ''}property names ${keyProblem}`;
        }
        pending.push({ value: item, name: childName(name, key) });
      }
    }
  }
  return undefined;
}

/**
 * The same rule for path parameters and query values, which reach SQL as text too: a NUL
 * there is a 400 naming the parameter, never a failed query.
 */
export function installStorableParams(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    for (const part of [request.params, request.query]) {
      if (part && typeof part === 'object') {
        for (const [name, value] of Object.entries(part as Record<string, unknown>)) {
          const problem = typeof value === 'string' ? problemOf(value) : undefined;
          if (problem) {
            done(new BadRequestError(`${name} ${problem}`));
            return;
          }
        }
      }
    }
    done();
  });
}
