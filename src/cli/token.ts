// `npm run token`: prints a session bearer for a new sandbox user, from the built-in
// development issuer (APP_ENV=sandbox without AUTH_JWKS_URL). With embedded storage the
// running server owns the data directory, so the server is asked first; only when none
// answers does the command open the storage itself.
import { loadDevIssuer } from '../auth/dev-issuer.js';
import { systemClock } from '../clock.js';
import { ConfigError, loadConfig } from '../config.js';
import { openStorage } from '../db/storage.js';

function fail(message: string): never {
  process.stderr.write(`haven token: ${message}\n`);
  process.exit(1);
}

async function fromRunningServer(baseUrl: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${baseUrl}/api/v1/sandbox/session-token`, {
      method: 'POST',
      signal: AbortSignal.timeout(1_500),
    });
    if (res.status !== 201) {
      return undefined;
    }
    return ((await res.json()) as { access_token: string }).access_token;
  } catch {
    return undefined; // nothing listening there
  }
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}
if (config.appEnv !== 'sandbox' || config.authJwksUrl) {
  fail(
    'tokens are minted only in APP_ENV=sandbox without AUTH_JWKS_URL (the identity provider issues them otherwise)',
  );
}

const served = await fromRunningServer(config.publicBaseUrl);
if (served) {
  process.stdout.write(`${served}\n`);
} else {
  let token: string | undefined;
  let failure: string | undefined;
  const storage = await openStorage(config).catch((error: Error) => fail(error.message));
  try {
    token = (await (await loadDevIssuer(storage.database.db, { clock: systemClock })).mint()).token;
  } catch (error) {
    failure = (error as Error).message;
  } finally {
    await storage.close();
  }
  if (!token) {
    fail(failure ?? 'no token was minted');
  }
  process.stdout.write(`${token}\n`);
}
