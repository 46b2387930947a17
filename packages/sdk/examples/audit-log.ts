// What happened, and proof of it: a change, the family's audit log (one page, then every
// entry), and the chain recomputed here against the head Haven signed.
//
//   HAVEN_URL=http://127.0.0.1:8080 npx tsx packages/sdk/examples/audit-log.ts
import { Haven, type StewardJwk } from '@haven/sdk';

const baseUrl = process.env.HAVEN_URL ?? 'http://127.0.0.1:8080';
const haven = new Haven({ baseUrl, sandboxSession: `audit-${Date.now()}` });

const setup = await haven.setup.quick({ child_name: 'Ada', birth_date: '2015-06-01' });
const family = setup.family.id;
await haven.policies.putRule(setup.policy.id, 'web_safesearch', {
  enabled: true,
  config: { enabled: true },
});

// One page, newest first…
const page = await haven.auditLog.list(family, { limit: 2 });
for (const entry of page.entries) {
  console.log(entry.seq, entry.action, entry.actor.type, JSON.stringify(entry.changes));
}
// …or every entry, page after page. The signed head first: the entries read after it hold
// all it counts (any written since are chained after it).
const head = await haven.auditLog.head(family);
const entries = [];
for await (const entry of haven.auditLog.list(family, { limit: 2 })) {
  entries.push(entry);
}
// Recomputed here: each hash, each link, the head's hash and its signature.
const keys = (await (await fetch(`${baseUrl}/.well-known/ocss/keys`)).json()) as {
  keys: StewardJwk[];
};
console.log(await haven.auditLog.verify(entries, { head, stewardKey: keys }));

// Whatever changed what Haven stored (here one entry's changes, altered in memory) shows.
const altered = entries.map((entry) =>
  entry.seq === 2 ? { ...entry, changes: { enabled: false } } : entry,
);
console.log(await haven.auditLog.verify(altered, { head }));
