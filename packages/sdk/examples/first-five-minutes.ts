// A developer's first five minutes (the main README's walkthrough), in TypeScript:
// a sandbox session token, an org, a test key, the key at work, and the usage it left.
//
//   HAVEN_URL=http://127.0.0.1:8080 npx tsx packages/sdk/examples/first-five-minutes.ts
import { Haven, HavenError } from '@haven/sdk';

const baseUrl = process.env.HAVEN_URL ?? 'http://127.0.0.1:8080';

// 1. A session token for a new sandbox user (the built-in development issuer).
const anonymous = new Haven({ baseUrl });
const { access_token } = await anonymous.sandbox.createSessionToken();
const me = new Haven({ baseUrl, sessionToken: access_token });

// 2. An org, and a test key for it (the secret is shown once).
const org = await me.orgs.create({ name: 'Acme Kids' });
const { key } = await me.apiKeys.create(org.id, {
  name: 'backend',
  environment: 'test',
  scopes: ['read:families', 'write:families'],
});

// 3. The key at work: it calls the /api/v1/developer routes.
const haven = new Haven({ baseUrl, apiKey: key });
const family = await haven.families.create({ name: 'The Lovelaces' });
const { data: families, rateLimit, requestId } = await haven.families.list().withResponse();
console.log(
  `families: ${families.length}; rate limit ${rateLimit?.remaining}/${rateLimit?.limit}; request ${requestId}`,
);

// A scope the key lacks is a 403, thrown as a HavenError.
try {
  await haven.webhooks.list();
} catch (error) {
  if (!(error instanceof HavenError) || error.status !== 403) {
    throw error;
  }
  console.log(`as expected: ${error.status} ${error.message}`);
}

// 4. The usage the key left: counted at once, written to the database every few seconds.
console.log(`created family ${family.id}`);
const usage = await me.usage.get(org.id, { days: 1 });
console.log(`usage so far: ${usage.length} row(s) (more appear within seconds)`);
