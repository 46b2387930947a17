// A TCP proxy the test controls, put between the app and a real service so the test can
// cut the connection (and restore it) without touching the shared server other tests use.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as { port: number }).port;
  }

  /** Drops every open connection and refuses new ones, as a dead server would. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) {
      socket.destroy();
    }
    if (server) {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  async restore(): Promise<void> {
    await this.start(this.port);
  }
}

/**
 * Starts a proxy in front of the service at `serviceUrl` (postgres://…, redis://…) and gives
 * the same URL pointed through it.
 */
export async function proxyInFrontOf(
  serviceUrl: string,
): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(serviceUrl);
  const defaultPort = target.protocol.startsWith('redis') ? 6379 : 5432;
  const proxy = new TcpProxy(target.hostname, Number(target.port || defaultPort));
  await proxy.start();
  const viaProxy = new URL(target);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  return { proxy, url: viaProxy.toString() };
}

/** Polls `check` until it holds, or fails after the deadline (never a fixed sleep). */
export async function eventually(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
