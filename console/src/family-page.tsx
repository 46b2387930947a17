// A family's page: its name, Export and Delete family, then its children (ages, bands, the
// signals behind them, the next age change, a link to each policy), its platform connections,
// its enforcement jobs, its children's devices and its audit log. Everything is read through
// the SDK when the page opens; the sandbox's demo family is shown read-only.
import type { Haven, Item, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { FamilyAuditLog } from './audit-log.js';
import { DeleteFamily, ErasureReceiptView, type ErasureStarted } from './delete-family.js';
import { EnforcementSection } from './enforcement.js';
import { isDemoFamily } from './families.js';
import { href } from './router.js';
import { Empty, ErrorText, type OnSignedOut, Section, useAction, when } from './ui.js';

type Family = Result<'getFamily'>;
type Child = Item<'listChildren'>;
type Signal = Item<'listAgeSignals'>;
type Connection = Item<'listConnections'>;
type Device = Item<'listDevices'>;
type Role = Item<'listFamilyMembers'>['role'] | 'none';

interface FamilyData {
  family: Family;
  children: { child: Child; signals: Signal[] }[];
  connections: Connection[];
  devices: Device[];
  /** The signed-in user's role in the family (`none` for the demo family). */
  role: Role;
}

async function load(haven: Haven, familyId: string): Promise<FamilyData> {
  const demo = isDemoFamily(familyId);
  const [family, children, connections, role] = await Promise.all([
    haven.families.get(familyId),
    haven.children.list(familyId),
    haven.connections.list(familyId),
    demo
      ? Promise.resolve<Role>('none')
      : Promise.all([haven.auth.me(), haven.families.listMembers(familyId)]).then(
          ([me, members]) => members.find((member) => member.user_id === me.id)?.role ?? 'none',
        ),
  ]);
  // Signals and devices are a child's: one request each per child, side by side.
  const perChild = await Promise.all(
    children.map(async (child) => {
      const [signals, devices] = await Promise.all([
        haven.children.listAgeSignals(child.id),
        haven.devices.list(child.id),
      ]);
      return { child, signals, devices };
    }),
  );
  return {
    family,
    children: perChild.map(({ child, signals }) => ({ child, signals })),
    connections,
    devices: perChild.flatMap(({ devices }) => devices),
    role,
  };
}

export function FamilyPage(props: { haven: Haven; onSignedOut: OnSignedOut; familyId: string }) {
  const { haven, onSignedOut, familyId } = props;
  const [data, setData] = useState<FamilyData | null>(null);
  const [erasure, setErasure] = useState<ErasureStarted | null>(null);
  const { error, run } = useAction(onSignedOut);
  useEffect(() => {
    setData(null);
    setErasure(null);
    void run(async () => setData(await load(haven, familyId)));
  }, [haven, familyId]);

  if (erasure) {
    return <ErasureReceiptView haven={haven} onSignedOut={onSignedOut} started={erasure} />;
  }
  if (!data) {
    return (
      <section class="card" aria-label="Family">
        <p>
          <a href={href({ view: 'families' })}>← Families</a>
        </p>
        {error ? <ErrorText error={error} /> : <p class="loading">Loading the family…</p>}
      </section>
    );
  }
  const { family } = data;
  const childName = new Map(data.children.map(({ child }) => [child.id, child.name]));
  return (
    <>
      <section class="card family-head" aria-labelledby="family-heading">
        <p class="crumb">
          <a href={href({ view: 'families' })}>← Families</a>
        </p>
        <h2 id="family-heading">{family.name}</h2>
        <p class="muted">
          Created {when(family.created_at)} ·{' '}
          {family.test_clock_id ? (
            <>
              on test clock <code>{family.test_clock_id}</code>
            </>
          ) : (
            'on the real clock'
          )}{' '}
          · <code>{family.id}</code>
        </p>
        <DeleteFamily
          haven={haven}
          onSignedOut={onSignedOut}
          family={family}
          role={data.role}
          demo={isDemoFamily(family.id)}
          onErased={setErasure}
        />
      </section>
      <Children familyId={family.id} rows={data.children} />
      <Connections connections={data.connections} />
      <EnforcementSection haven={haven} onSignedOut={onSignedOut} familyId={family.id} />
      <Devices devices={data.devices} childName={childName} />
      <FamilyAuditLog haven={haven} onSignedOut={onSignedOut} familyId={family.id} />
    </>
  );
}

function range(signal: Signal): string {
  const { age_lower: lower, age_upper: upper } = signal;
  if (lower !== null && upper !== null) {
    return lower === upper ? `${lower}` : `${lower}–${upper}`;
  }
  return lower !== null ? `${lower} or older` : `${upper ?? '?'} or younger`;
}

function Children(props: { familyId: string; rows: { child: Child; signals: Signal[] }[] }) {
  return (
    <Section title="Children" id="children">
      {props.rows.length === 0 ? (
        <Empty>No child in this family yet.</Empty>
      ) : (
        <div class="scroll contained">
          <table class="children-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Age</th>
                <th scope="col">age_group</th>
                <th scope="col">effective_age</th>
                <th scope="col">age_conflict</th>
                <th scope="col">Next age change</th>
                <th scope="col">
                  <span class="visually-hidden">Policy</span>
                </th>
              </tr>
            </thead>
            {props.rows.map(({ child, signals }) => (
              <tbody key={child.id}>
                <tr class="child-row">
                  <th scope="row" class="child-name">
                    {child.name}
                  </th>
                  <td class="child-cell" data-label="Age">
                    {child.age}
                  </td>
                  <td class="child-cell" data-label="age_group">
                    {child.age_group}
                  </td>
                  <td class="child-cell" data-label="effective_age">
                    {child.effective_age}
                  </td>
                  <td
                    class={child.age_conflict ? 'child-cell age-conflict' : 'child-cell'}
                    data-label="age_conflict"
                  >
                    {child.age_conflict ? 'yes' : 'no'}
                  </td>
                  <td class="child-cell" data-label="Next age change">
                    <time dateTime={child.next_age_change_on}>{child.next_age_change_on}</time>
                  </td>
                  <td class="child-cell actions" data-label="">
                    <a href={href({ view: 'policy', familyId: props.familyId, childId: child.id })}>
                      Policy
                    </a>
                  </td>
                </tr>
                {signals.length > 0 || child.age_conflict ? (
                  <tr class="child-signals">
                    <td colSpan={7}>
                      <Signals child={child} signals={signals} />
                    </td>
                  </tr>
                ) : null}
              </tbody>
            ))}
          </table>
        </div>
      )}
    </Section>
  );
}

/** The age signals behind a child's effective age and conflict, newest first. */
function Signals(props: { child: Child; signals: Signal[] }) {
  const { child, signals } = props;
  return (
    <div>
      <p class="signals-summary">
        {child.age_conflict
          ? `Age conflict: the birth date says ${child.age}, outside a signal's range; Haven protects for ${child.effective_age}.`
          : `Age signals for ${child.name}: Haven protects for ${child.effective_age}.`}
      </p>
      {signals.length === 0 ? null : (
        <ul class="signal-list" aria-label={`Age signals of ${child.name}`}>
          {signals.map((signal) => (
            <li key={signal.id}>
              <code>{signal.source}</code>: {range(signal)}
              {signal.method ? ` (${signal.method})` : ''}, observed {when(signal.observed_at)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Connections(props: { connections: Connection[] }) {
  return (
    <Section title="Connections" id="connections">
      {props.connections.length === 0 ? (
        <Empty>No platform connected.</Empty>
      ) : (
        <div class="scroll contained">
          <table>
            <thead>
              <tr>
                <th scope="col">Platform</th>
                <th scope="col">Status</th>
                <th scope="col">Credentials</th>
                <th scope="col">Profiles</th>
                <th scope="col">Last enforcement</th>
                <th scope="col">Connected</th>
              </tr>
            </thead>
            <tbody>
              {props.connections.map((connection) => (
                <tr key={connection.id}>
                  <td>
                    <code>{connection.platform_id}</code>
                  </td>
                  <td>{connection.status}</td>
                  <td>{connection.has_credentials ? 'stored (sealed)' : 'none'}</td>
                  <td>
                    {connection.profiles.length === 0
                      ? '—'
                      : connection.profiles.map((profile) => profile.displayName).join(', ')}
                  </td>
                  <td>
                    {connection.last_enforcement_status
                      ? `${connection.last_enforcement_status}, ${when(connection.last_enforcement_at)}`
                      : '—'}
                  </td>
                  <td>{when(connection.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}

function Devices(props: { devices: Device[]; childName: Map<string, string> }) {
  return (
    <Section title="Devices" id="devices">
      {props.devices.length === 0 ? (
        <Empty>No device registered.</Empty>
      ) : (
        <div class="scroll contained">
          <table>
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">Child</th>
                <th scope="col">Status</th>
                <th scope="col">Key</th>
                <th scope="col">Policy version</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {props.devices.map((device) => (
                <tr key={device.id}>
                  <td>
                    {device.device_name}
                    {[device.device_model, device.os_version].some(Boolean) ? (
                      <span class="muted">
                        {' '}
                        ({[device.device_model, device.os_version].filter(Boolean).join(', ')})
                      </span>
                    ) : null}
                  </td>
                  <td>{props.childName.get(device.child_id) ?? device.child_id}</td>
                  <td>{device.status}</td>
                  <td class="nowrap">
                    <code>{device.key_prefix}…</code>
                  </td>
                  <td>{device.acknowledged_version ?? '—'}</td>
                  <td>{when(device.last_seen_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
