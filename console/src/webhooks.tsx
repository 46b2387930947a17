// Webhooks: list, create, send a test, and each one's delivery log with a retry button.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { NewSecret } from './api-keys.js';
import { FamilySelect, useWritableFamilies } from './families.js';
import { Empty, ErrorText, HeaderRow, type OnSignedOut, Section, useAction, when } from './ui.js';

type Webhook = Result<'listWebhooks'>[number];
type Delivery = Result<'listWebhookDeliveries'>[number];

function Deliveries(props: { haven: Haven; webhook: Webhook; onSignedOut: OnSignedOut }) {
  const { haven, webhook } = props;
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const { busy, error, run } = useAction(props.onSignedOut);
  const reload = async () => setDeliveries(await haven.webhooks.listDeliveries(webhook.id));
  useEffect(() => void run(reload), [webhook.id]);
  return (
    <div class="deliveries">
      <div class="row">
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            run(async () => {
              await haven.webhooks.test(webhook.id);
              await reload();
            })
          }
        >
          Send test
        </button>
        <button type="button" disabled={busy} onClick={() => run(reload)}>
          Refresh deliveries
        </button>
      </div>
      <ErrorText error={error} />
      {deliveries === null ? (
        <p class="loading">Loading deliveries…</p>
      ) : deliveries.length === 0 ? (
        <Empty>No delivery yet: send a test.</Empty>
      ) : (
        <div class="scroll">
          <table aria-label={`Deliveries to ${webhook.url}`}>
            <HeaderRow columns={['Event', 'Status', 'Response', 'Attempt', 'Next retry']} />
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td>{delivery.event}</td>
                  <td>{delivery.status}</td>
                  <td>{delivery.response_code ?? delivery.error ?? '—'}</td>
                  <td>{delivery.attempt}</td>
                  <td>{when(delivery.next_retry_at)}</td>
                  <td>
                    {delivery.status === 'failed' ? (
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() =>
                          run(async () => {
                            await haven.webhooks.retryDelivery(webhook.id, delivery.id);
                            await reload();
                          })
                        }
                      >
                        Retry
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

export function Webhooks(props: { haven: Haven; onSignedOut: OnSignedOut }) {
  const { haven } = props;
  const { busy, error, run } = useAction(props.onSignedOut);
  // Only families the caller may change (owner or parent): a guardian's webhook is refused,
  // and the demo family never changes (a webhook there would never fire, and is refused).
  const families = useWritableFamilies(haven, run);
  const [webhooks, setWebhooks] = useState<Webhook[] | null>(null);
  const [familyId, setFamilyId] = useState('');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const reload = async () => setWebhooks(await haven.webhooks.list());
  useEffect(() => void run(reload), [haven]);
  const chosen = familyId || families?.[0]?.id || '';
  return (
    <Section title="Webhooks" id="webhooks">
      {families !== null && families.length === 0 ? (
        <Empty>
          A webhook watches a family you may change (as its owner or a parent): create a family
          first (e.g. a quick setup). The demo family never changes, so it has no webhooks.
        </Empty>
      ) : (
        <form
          class="inline"
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              const created = await haven.webhooks.create({
                family_id: chosen,
                url: url.trim(),
                events: events
                  .split(',')
                  .map((e) => e.trim())
                  .filter(Boolean),
              });
              setSecret(created.secret);
              setUrl('');
              await reload();
            });
          }}
        >
          <FamilySelect
            id="webhook-family"
            families={families}
            value={chosen}
            onChange={setFamilyId}
          />
          <label for="webhook-url">Endpoint URL</label>
          <input
            id="webhook-url"
            type="url"
            value={url}
            onInput={(event) => setUrl((event.target as HTMLInputElement).value)}
          />
          <label for="webhook-events">Events</label>
          <input
            id="webhook-events"
            value={events}
            onInput={(event) => setEvents((event.target as HTMLInputElement).value)}
          />
          <button type="submit" class="primary" disabled={busy || !chosen}>
            Create webhook
          </button>
        </form>
      )}
      <ErrorText error={error} />
      {secret ? (
        <NewSecret label="New webhook secret" secret={secret} onDone={() => setSecret(null)} />
      ) : null}
      {webhooks === null ? (
        <p class="loading">Loading webhooks…</p>
      ) : webhooks.length === 0 ? (
        <Empty>No webhook yet.</Empty>
      ) : (
        <ul class="webhooks">
          {webhooks.map((webhook) => (
            <li key={webhook.id}>
              <div class="row">
                <code>{webhook.url}</code>
                <span class="muted">
                  {webhook.active ? 'active' : `disabled: ${webhook.disabled_reason ?? ''}`}
                  {webhook.failing_since ? `, failing since ${when(webhook.failing_since)}` : ''}
                </span>
                <button
                  type="button"
                  aria-expanded={open === webhook.id}
                  onClick={() => setOpen(open === webhook.id ? null : webhook.id)}
                >
                  Deliveries
                </button>
              </div>
              {open === webhook.id ? (
                <Deliveries haven={haven} webhook={webhook} onSignedOut={props.onSignedOut} />
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
