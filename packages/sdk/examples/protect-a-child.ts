// Protect a child end to end, hearing about it through a verified webhook:
// quick setup, a platform, a webhook endpoint (verified with verifyWebhook), enforcement.
//
//   HAVEN_URL=http://127.0.0.1:8080 npx tsx packages/sdk/examples/protect-a-child.ts
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Haven, verifyWebhook } from '@haven/sdk';

const baseUrl = process.env.HAVEN_URL ?? 'http://127.0.0.1:8080';
// The sandbox needs no credential: a session name keys your data.
const haven = new Haven({ baseUrl, sandboxSession: `example-${Date.now()}` });

const setup = await haven.setup.quick({ child_name: 'Ada', birth_date: '2015-06-01' });
console.log(`${setup.child.name}: ${setup.rules.length} rules for the ${setup.age_group} group`);
await haven.connections.create(setup.family.id, { platform_id: 'nextdns' });

// A local endpoint that accepts only deliveries signed with the webhook's secret.
let secret = '';
const heard = new Promise<{ type: string }>((resolve, reject) => {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        // Throws unless the delivery is signed with the webhook's secret, and recent.
        const event = verifyWebhook(
          secret,
          request.headers,
          Buffer.concat(chunks).toString('utf8'),
        );
        response.writeHead(204).end();
        const typed = event as { type: string };
        if (typed.type.startsWith('enforcement.')) {
          server.close();
          resolve(typed);
        }
      } catch (error) {
        response.writeHead(400).end();
        server.close();
        reject(error);
      }
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    haven.webhooks
      .create({
        family_id: setup.family.id,
        url: `http://127.0.0.1:${port}/hooks`,
        events: ['enforcement.completed', 'enforcement.partial', 'enforcement.failed'],
      })
      .then(async (webhook) => {
        secret = webhook.secret;
        const job = await haven.enforcement.enforce(setup.child.id);
        console.log(`enforcement job ${job.id} queued`);
      }, reject);
  });
});

const event = await heard;
console.log(`webhook verified: ${event.type}`);
