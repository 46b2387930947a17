// `npm run token`: prints a session bearer for a new sandbox user, from the built-in
// development issuer (APP_ENV=sandbox without AUTH_JWKS_URL). With embedded storage the
// running server owns the data directory, so the server is asked first; only when none
// answers does the command open the storage itself.
import { loadDevIssuer } from '../auth/dev-issuer.js';
import { systemClock } from '../clock.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { openStorage } from '../db/storage.js';

/** Long enough for a local server, short enough not to stall when nothing listens. */
const SERVER_TIMEOUT_MS = 1_500;

function fail(message: string): never {
  process.stderr.write(`haven token: ${message}\n`);
  process.exit(1);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function fromRunningServer(baseUrl: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${baseUrl}/api/v1/sandbox/session-token`, {
      method: 'POST',
      signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
    });
    if (res.status !== 201) {
      return undefined;
    }
    const body: unknown = await res.json();
    const token =
      typeof body === 'object' && body !== null && 'access_token' in body
        ? body.access_token
        : undefined;
    return typeof token === 'string' && token !== '' ? token : undefined;
  } catch {
    return undefined; // nothing listening there, or not Haven
  }
}

async function fromStorage(config: Config): Promise<string> {
  if (!config.databaseUrl && config.dataDir === 'memory') {
    // A key made in this process's memory would die with it: no server could verify the token.
    fail('no server answered at PUBLIC_BASE_URL, and DATA_DIR=memory keeps no key to sign with');
  }
  const storage = await openStorage(config).catch((error: unknown) => fail(messageOf(error)));
  // fail() exits at once, so the storage (and the DATA_DIR lock) is released before it runs.
  const minted = await loadDevIssuer(storage.database.db, { clock: systemClock })
    .then((issuer) => issuer.mint())
    .then(
      ({ token }) => ({ token }),
      (error: unknown) => ({ error: messageOf(error) }),
    );
  await storage.close();
  if ('error' in minted) {
    fail(minted.error);
  }
  return minted.token;
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : messageOf(error));
}
if (config.appEnv !== 'sandbox' || config.authJwksUrl) {
  fail(
    'tokens are minted only in APP_ENV=sandbox without AUTH_JWKS_URL (the identity provider issues them otherwise)',
  );
}

const token = (await fromRunningServer(config.publicBaseUrl)) ?? (await fromStorage(config));
process.stdout.write(`${token}\n`);
