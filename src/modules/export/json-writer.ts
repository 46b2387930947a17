// One JSON document written as its parts are read: objects and arrays whose members come from
// async sources, so no part of the document is held beyond the text being written.

/** Pieces of JSON text, in order; concatenated they are the document. */
export type Chunks = AsyncIterable<string> | Iterable<string>;

/** A value already at hand. */
export function value(item: unknown): Chunks {
  return [JSON.stringify(item)];
}

/** `[a,b,…]`, each item written by `write` as it arrives. */
export async function* array<T>(
  items: AsyncIterable<T> | Iterable<T>,
  write: (item: T) => Chunks = value,
): AsyncGenerator<string> {
  yield '[';
  let first = true;
  for await (const item of items) {
    if (!first) {
      yield ',';
    }
    first = false;
    yield* write(item);
  }
  yield ']';
}

/** `{"k":v,…}`, the members in the order given, each written when its turn comes. */
export async function* object(members: ReadonlyArray<readonly [string, Chunks]>) {
  yield '{';
  let first = true;
  for (const [key, chunks] of members) {
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* chunks;
  }
  yield '}';
}

/**
 * `head` (a non-empty object) with one more member written after its own: a child and its
 * age signals, a policy and its rules.
 */
export async function* extended(head: object, key: string, chunks: Chunks) {
  const text = JSON.stringify(head);
  yield `${text.slice(0, -1)},${JSON.stringify(key)}:`;
  yield* chunks;
  yield '}';
}

/**
 * The same text in pieces of at least `size` characters (the last may be shorter): one
 * socket write per piece instead of one per row. The first piece goes at once, so the answer
 * has begun before the first page is read (every failure after it ends the same way).
 */
export async function* batched(chunks: Chunks, size = 64 * 1024): AsyncGenerator<string> {
  let pending = '';
  let started = false;
  for await (const chunk of chunks) {
    pending += chunk;
    if (!started || pending.length >= size) {
      started = true;
      yield pending;
      pending = '';
    }
  }
  if (pending !== '') {
    yield pending;
  }
}
