// Erasing a child, and proof of it: the erasure id from the DELETE's Haven-Erasure-Id header,
// the receipt once every release has ended, and its signature checked here against the
// steward keys Haven publishes.
//
//   HAVEN_URL=http://127.0.0.1:8080 npx tsx packages/sdk/examples/erasure-receipt.ts
import { Haven, type StewardJwk } from '@haven/sdk';

const baseUrl = process.env.HAVEN_URL ?? 'http://127.0.0.1:8080';
const haven = new Haven({ baseUrl, sandboxSession: `erasure-${Date.now()}` });

const setup = await haven.setup.quick({ child_name: 'Ada', birth_date: '2015-06-01' });

// A 204 has no body: the erasure id is a header, read with withResponse().
const { response } = await haven.children.delete(setup.child.id).withResponse();
const erasureId = response.headers.get('haven-erasure-id');
if (!erasureId) {
  throw new Error('no Haven-Erasure-Id header');
}
console.log(response.status, erasureId);

// Signed once completed (at once with nothing to release, else when every release ended).
const deadline = Date.now() + 30_000;
let receipt = await haven.erasures.get(erasureId);
while (receipt.completed_at === null) {
  if (Date.now() > deadline) {
    throw new Error('the erasure did not complete within 30 s');
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  receipt = await haven.erasures.get(erasureId);
}
console.log(receipt.subject, receipt.erased, receipt.releases);

// Checked here: the steward's EdDSA signature over the receipt's JCS form.
const keys = (await (await fetch(`${baseUrl}/.well-known/ocss/keys`)).json()) as {
  keys: StewardJwk[];
};
console.log(await haven.erasures.verify(receipt, { stewardKey: keys }));

// A receipt changed after it was signed (here its counts, in memory) no longer verifies.
const edited = { ...receipt, erased: { ...receipt.erased, children: 0 } };
console.log(await haven.erasures.verify(edited, { stewardKey: keys }));
