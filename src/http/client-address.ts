// The client address a request is counted under (its per-IP bucket), for the fast paths
// that answer ahead of Fastify: the same answer as Fastify's `request.ip` for the same
// trustProxy setting, by the same library (@fastify/proxy-addr) and the same rules, so a
// client counts in one bucket whichever path answers it.
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/** Fastify's trustProxy option as app.ts passes it (a hop count is already a function). */
export type TrustedProxies = boolean | string[] | ((address: string, hop: number) => boolean);

export function clientAddress(trust: TrustedProxies): (request: IncomingMessage) => string {
  if (trust === false) {
    return (request) => request.socket.remoteAddress ?? '';
  }
  const trusted =
    trust === true ? () => true : typeof trust === 'function' ? trust : proxyAddr.compile(trust);
  return (request) => {
    // The furthest address of the chain of trusted hops, as Fastify's `ip` getter reads it.
    const addresses = proxyAddr.all(request, trusted);
    return addresses[addresses.length - 1] ?? '';
  };
}
