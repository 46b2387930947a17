// A request's transaction: every statement a request runs between its first write and its
// answer is one PostgreSQL transaction, committed together with the answer it records (the
// Idempotency-Key receipt), so a process that dies in between leaves neither (docs/
// decisions.md "A write and its answer commit together").
//
// The request does not pass a transaction around: its services keep using the database
// handle, and the driver below sends their statements to the request's connection. Which
// request a statement belongs to is known through AsyncLocalStorage, which Node 20 pays for
// on every promise of the process while it is enabled (+10 µs a request on the keyed catalog
// read, measured with `npm run bench`): it is enabled only while a request's transaction is
// open, and disabled again when the last one ends.
//
// - The request's statements share one connection while any of them runs (so two at once
//   cannot take the embedded database's only connection twice and wait on each other); a
//   read with nothing else running gives it back, so a request waiting on a partner between
//   two reads holds nothing.
// - Its first writing statement (or first `db.transaction()`) begins the transaction on that
//   connection, which it then keeps until the answer. A `db.transaction()` inside it is a
//   savepoint: its rollback undoes its own work, its commit waits for the request's.
// - `end()` runs the closing statements (the receipt), commits, gives the connection back,
//   then runs what was waiting for the commit (cache invalidations, waking workers).
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

const scopes = new AsyncLocalStorage<RequestTransaction>();
let openScopes = 0;

const WRITE_KINDS = new Set([
  'InsertQueryNode',
  'UpdateQueryNode',
  'DeleteQueryNode',
  'MergeQueryNode',
]);
// Reads, and the statements that open and close transactions (the driver sends them).
const READ_TEXT =
  /^\s*(select|show|explain|begin|start transaction|commit|rollback|savepoint|release)\b/i;

/** Whether a statement may change rows (raw SQL counts as a write unless it reads). */
function writes(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  if (kind === 'RawNode') {
    return !READ_TEXT.test(query.sql);
  }
  return WRITE_KINDS.has(kind);
}

/** The open request transaction of the code running now, if any. */
export function currentRequestTransaction(): RequestTransaction | undefined {
  const scope = scopes.getStore();
  return scope?.open ? scope : undefined;
}

/**
 * Runs `effect` once what the running code wrote is committed: at once outside a request
 * transaction (the caller's own transaction has committed), at its commit inside one, and
 * never if it rolls back.
 */
export function afterCommit(effect: () => unknown): void {
  const scope = currentRequestTransaction();
  if (scope) {
    scope.effects.push(effect);
    return;
  }
  runEffect(effect);
}

function runEffect(effect: () => unknown): void {
  try {
    const result = effect();
    if (result instanceof Promise) {
      result.catch(() => {});
    }
  } catch {
    // An effect after a commit is best-effort by nature (an invalidation, a wake-up): the
    // change itself is durable, and each effect has its own fallback (cache lifetimes, polls).
  }
}

/** A transaction opened through Kysely inside the request's: the outer one, or a savepoint. */
interface Frame {
  savepoint: string | undefined;
  /** Lets the next transaction of the request begin (see `turn`). */
  done: () => void;
}

/** One wrapper per driver connection, so Kysely's statement log patches it once. */
class ScopedConnection implements DatabaseConnection {
  /** The request transaction holding this connection, if any. */
  scope: RequestTransaction | undefined;
  /** Savepoints (and the outer transaction) opened through Kysely, innermost last. */
  readonly frames: Frame[] = [];
  /**
   * Kysely never nests its transactions, so two open at once in one request are two branches
   * of it running side by side (Promise.all): they take turns, or each would end the other's
   * savepoint.
   */
  turn: Promise<void> = Promise.resolve();

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const scope = this.scope;
    if (scope && !scope.begun && writes(query)) {
      await scope.begin({});
    }
    return this.inner.executeQuery<R>(query);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

export class RequestTransaction {
  open = true;
  begun = false;
  readonly effects: Array<() => unknown> = [];
  /** The connection the request's statements share, and how many are using it now. */
  connection: ScopedConnection | undefined;
  private users = 0;
  private pending: Promise<ScopedConnection> | undefined;
  private beginning: Promise<void> | undefined;
  private savepoints = 0;

  constructor(private readonly driver: RequestScopedDriver) {}

  /** Runs `work` as part of this request (its statements join the transaction). */
  within<T>(work: () => T): T {
    return scopes.run(this, work);
  }

  async acquire(): Promise<ScopedConnection> {
    this.users++;
    if (this.connection) {
      return this.connection;
    }
    this.pending ??= this.driver.acquireOwn().then((connection) => {
      connection.scope = this;
      this.connection = connection;
      this.pending = undefined;
      return connection;
    });
    try {
      return await this.pending;
    } catch (error) {
      this.users--;
      throw error;
    }
  }

  async release(): Promise<void> {
    this.users--;
    if (this.users === 0 && !this.begun && this.connection) {
      const connection = this.connection;
      this.connection = undefined;
      connection.scope = undefined;
      await this.driver.releaseOwn(connection);
    }
  }

  begin(settings: TransactionSettings): Promise<void> {
    this.beginning ??= (async () => {
      const connection = this.connection;
      if (!connection) {
        throw new Error('a request transaction begins on a connection it holds');
      }
      await this.driver.inner.beginTransaction(connection, settings);
      this.begun = true;
    })();
    return this.beginning;
  }

  nextSavepoint(): string {
    this.savepoints++;
    return `request_savepoint_${this.savepoints}`;
  }

  /** The outer transaction was rolled back through Kysely: the request starts afresh. */
  abandoned(): void {
    this.begun = false;
    this.beginning = undefined;
  }

  /**
   * Runs `closing` inside the transaction (when one began), commits, and gives the
   * connection back; then the effects waiting for the commit. On failure everything the
   * request wrote is rolled back, the effects are dropped, and the error is thrown.
   */
  async end(closing: (committing: boolean) => Promise<void>): Promise<void> {
    try {
      if (!this.begun) {
        // Nothing written: the closing statements stand on their own, outside the scope.
        this.close();
        await closing(false);
      } else {
        const connection = this.connection as ScopedConnection;
        try {
          await this.within(() => closing(true));
          await connection.executeQuery(CompiledQuery.raw('commit'));
        } catch (error) {
          await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => {});
          throw error;
        } finally {
          this.begun = false;
          await this.dropConnection();
        }
      }
    } catch (error) {
      this.effects.length = 0;
      this.close();
      throw error;
    }
    const effects = this.effects.splice(0);
    this.close();
    for (const effect of effects) {
      runEffect(effect);
    }
  }

  /** Rolls back whatever the request wrote (its answer will not be recorded). */
  async abort(): Promise<void> {
    try {
      if (this.begun && this.connection) {
        await this.connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => {});
      }
      this.begun = false;
      await this.dropConnection();
    } finally {
      this.effects.length = 0;
      this.close();
    }
  }

  private async dropConnection(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.users = 0;
    if (connection) {
      connection.scope = undefined;
      for (const frame of connection.frames.splice(0)) {
        frame.done();
      }
      await this.driver.releaseOwn(connection);
    }
  }

  private close(): void {
    if (!this.open) {
      return;
    }
    this.open = false;
    openScopes--;
    if (openScopes === 0) {
      // Nothing needs to know its request any more: stop paying for it on every promise.
      scopes.disable();
    }
  }
}

/**
 * Kysely's driver with request transactions: wraps the dialect's own driver (PostgreSQL's
 * or, over the embedded database's pool, the same one).
 */
export class RequestScopedDriver implements Driver {
  private readonly wrappers = new WeakMap<DatabaseConnection, ScopedConnection>();

  constructor(readonly inner: Driver) {}

  /** Opens a request transaction; its statements join it once `within` runs them. */
  open(): RequestTransaction {
    openScopes++;
    return new RequestTransaction(this);
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireOwn(): Promise<ScopedConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrappers.get(connection);
    if (!wrapper) {
      wrapper = new ScopedConnection(connection);
      this.wrappers.set(connection, wrapper);
    }
    return wrapper;
  }

  releaseOwn(connection: ScopedConnection): Promise<void> {
    return this.inner.releaseConnection(connection.inner);
  }

  acquireConnection(): Promise<DatabaseConnection> {
    const scope = currentRequestTransaction();
    return scope ? scope.acquire() : this.acquireOwn();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const wrapper = connection as ScopedConnection;
    if (wrapper.scope) {
      await wrapper.scope.release();
      return;
    }
    await this.releaseOwn(wrapper);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const wrapper = connection as ScopedConnection;
    const scope = wrapper.scope;
    // Sent through the wrapper, so the statement log sees `begin` and `commit` as before.
    if (!scope) {
      return this.inner.beginTransaction(wrapper, settings);
    }
    const previous = wrapper.turn;
    let done: () => void = () => {};
    wrapper.turn = new Promise((resolve) => {
      done = resolve;
    });
    await previous;
    try {
      if (!scope.begun) {
        await scope.begin(settings);
        wrapper.frames.push({ savepoint: undefined, done });
        return;
      }
      const savepoint = scope.nextSavepoint();
      await wrapper.executeQuery(CompiledQuery.raw(`savepoint ${savepoint}`));
      wrapper.frames.push({ savepoint, done });
    } catch (error) {
      done();
      throw error;
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const wrapper = connection as ScopedConnection;
    if (!wrapper.scope) {
      return this.inner.commitTransaction(wrapper);
    }
    const frame = wrapper.frames.pop();
    try {
      if (frame?.savepoint !== undefined) {
        await wrapper.executeQuery(CompiledQuery.raw(`release savepoint ${frame.savepoint}`));
      }
      // The outer frame commits with the request's answer (RequestTransaction.end).
    } finally {
      frame?.done();
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const wrapper = connection as ScopedConnection;
    const scope = wrapper.scope;
    if (!scope) {
      return this.inner.rollbackTransaction(wrapper);
    }
    const frame = wrapper.frames.pop();
    try {
      if (frame?.savepoint === undefined) {
        await wrapper.executeQuery(CompiledQuery.raw('rollback'));
        scope.abandoned();
        return;
      }
      await wrapper.executeQuery(CompiledQuery.raw(`rollback to savepoint ${frame.savepoint}`));
      await wrapper.executeQuery(CompiledQuery.raw(`release savepoint ${frame.savepoint}`));
    } finally {
      frame?.done();
    }
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** PostgreSQL's dialect with request transactions (PGlite runs it too, over its pool). */
export class RequestScopedPostgresDialect extends PostgresDialect {
  driver: RequestScopedDriver | undefined;

  override createDriver(): Driver {
    this.driver = new RequestScopedDriver(super.createDriver());
    return this.driver;
  }
}

const drivers = new WeakMap<object, RequestScopedDriver>();

/** A database handle built on `dialect`, made able to open request transactions. */
export function withRequestTransactions<D extends object>(
  db: D,
  dialect: RequestScopedPostgresDialect,
): D {
  if (!dialect.driver) {
    throw new Error('the dialect made no driver: build the Kysely instance first');
  }
  drivers.set(db, dialect.driver);
  return db;
}

/** Opens a request transaction on `db` (undefined for a handle without them). */
export function openRequestTransaction(db: object): RequestTransaction | undefined {
  return drivers.get(db)?.open();
}
