// What a generated method takes and gives, read off the types openapi-typescript rendered
// from the OpenAPI document (generated/schema.ts), by operation id.
import type { operations } from './generated/schema.js';

export type OperationId = keyof operations;

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The operation's JSON request body. */
export type Body<K extends OperationId> = operations[K] extends { requestBody?: infer R }
  ? Exclude<JsonOf<NonNullable<R>>, null>
  : never;

/** The operation's query parameters. */
export type Query<K extends OperationId> = operations[K] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

type Success<R> = R extends { 200: infer A }
  ? A
  : R extends { 201: infer A }
    ? A
    : R extends { 202: infer A }
      ? A
      : undefined;

/** What the operation's success answer holds (`undefined` for a 204). */
export type Result<K extends OperationId> = operations[K]['responses'] extends { 204: unknown }
  ? undefined
  : JsonOf<Success<operations[K]['responses']>>;

/** One element of the array `F` of a page answer (`PageItem<'listFamilyAuditLog', 'entries'>`). */
export type PageItem<K extends OperationId, F extends string> =
  Result<K> extends {
    [field in F]: ReadonlyArray<infer E>;
  }
    ? E
    : never;

/** One element of a list answer. */
export type Item<K extends OperationId> = Result<K> extends ReadonlyArray<infer E> ? E : never;
