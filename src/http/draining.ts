// Graceful stop, step one: stop taking new work and let the requests in hand finish before
// the server closes. Node's server.close() destroys "idle" keep-alive connections at once,
// and a connection counts as idle as soon as its response is ended, even if the bytes are
// not yet flushed: a request carried out at that instant would lose its answer. So the
// process first drains (new requests get 503 with `Connection: close`; in-flight ones run
// to their flushed end), and only then closes.
import type { FastifyInstance } from 'fastify';
import { sendFailure } from './error-handler.js';

export interface Draining {
  /** Resolves once no request is in flight, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Stop taking requests and wait (bounded) for those in flight; then close(). */
    drain: Draining['drain'];
    /** True once drain() was called: the instance is on its way out. */
    readonly draining: boolean;
    /**
     * Step zero, for a shutdown delay: the readiness probe says not ready (so balancers stop
     * sending here) while every request is still served. drain() follows.
     */
    announceStop(): void;
    /** True once announceStop() or drain() was called: readiness fails. */
    readonly stopping: boolean;
  }
  interface FastifyContextConfig {
    /**
     * The route answers for itself while draining (the health probe says `draining` in its
     * own documented shape, which load balancers read) instead of the generic 503.
     */
    answersWhileDraining?: boolean;
  }
}

export const DRAINING_MESSAGE = 'server is shutting down: retry shortly';

/** Requests answered outside Fastify's hooks (an asynchronous fast path) hold the drain too. */
export interface InFlight {
  enter(): void;
  leave(): void;
}

export function installDraining(app: FastifyInstance): InFlight {
  /** Requests counted in: the 503s of the drain itself never were. */
  const counted = new WeakSet<object>();
  let inFlight = 0;
  let draining = false;
  let announced = false;
  let idle: (() => void) | undefined;
  const held: InFlight = {
    enter() {
      inFlight++;
    },
    leave() {
      inFlight--;
      if (inFlight === 0) {
        idle?.();
      }
    },
  };

  app.addHook('onRequest', (request, reply, done) => {
    if (draining && !request.routeOptions.config.answersWhileDraining) {
      reply.header('connection', 'close');
      sendFailure(reply, { status: 503, message: DRAINING_MESSAGE });
      return;
    }
    held.enter();
    counted.add(request);
    done();
  });
  // Answers sent while draining close their connection, so clients open a new one (and
  // meet the 503 or the closed port) instead of reusing one that close() will destroy.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) {
      reply.header('connection', 'close');
    }
    done(null, payload);
  });
  // onResponse runs once the response is flushed to the socket. A request its client
  // abandoned may never get there; the drain's timeout bounds the wait for it.
  app.addHook('onResponse', (request, _reply, done) => {
    if (counted.has(request)) {
      held.leave();
    }
    done();
  });

  // close() without drain() first (tests, a failed start) still refuses new requests rather
  // than routing them into resources that are closing.
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  app.decorate('draining', {
    getter: () => draining,
  });
  app.decorate('announceStop', () => {
    announced = true;
  });
  app.decorate('stopping', {
    getter: () => announced || draining,
  });
  app.decorate('drain', (timeoutMs: number): Promise<void> => {
    draining = true;
    if (inFlight === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  });
  return held;
}
