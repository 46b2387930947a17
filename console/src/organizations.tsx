// Organizations: create, list, switch; and the members of the one selected.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { Empty, ErrorText, HeaderRow, type OnSignedOut, Section, useAction, when } from './ui.js';

type Org = Result<'listDeveloperOrgs'>[number];
type Member = Result<'listDeveloperOrgMembers'>[number];

function Members(props: { haven: Haven; orgId: string; onSignedOut: OnSignedOut }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<'member' | 'admin' | 'owner'>('member');
  const { busy, error, run } = useAction(props.onSignedOut);
  const load = () => run(async () => setMembers(await props.haven.orgs.listMembers(props.orgId)));
  useEffect(() => void load(), [props.orgId]);
  return (
    <div>
      <h3>Members</h3>
      {members === null ? (
        <p class="loading">Loading members…</p>
      ) : (
        <table>
          <HeaderRow columns={['User', 'Role', 'Since']} />
          <tbody>
            {members.map((member) => (
              <tr key={member.id}>
                <td>
                  <code>{member.user_id}</code>
                </td>
                <td>{member.role}</td>
                <td>{when(member.created_at)}</td>
                <td>
                  <button
                    type="button"
                    disabled={busy}
                    aria-label={`Remove ${member.user_id}`}
                    onClick={() =>
                      run(async () => {
                        await props.haven.orgs.removeMember(props.orgId, member.user_id);
                        setMembers(await props.haven.orgs.listMembers(props.orgId));
                      })
                    }
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            await props.haven.orgs.addMember(props.orgId, { user_id: userId.trim(), role });
            setUserId('');
            setMembers(await props.haven.orgs.listMembers(props.orgId));
          });
        }}
      >
        <label for="member-user">User id</label>
        <input
          id="member-user"
          value={userId}
          onInput={(event) => setUserId((event.target as HTMLInputElement).value)}
        />
        <label for="member-role">Role</label>
        <select
          id="member-role"
          value={role}
          onChange={(event) => setRole((event.target as HTMLSelectElement).value as typeof role)}
        >
          <option value="member">member</option>
          <option value="admin">admin</option>
          <option value="owner">owner</option>
        </select>
        <button type="submit" disabled={busy}>
          Invite member
        </button>
      </form>
      <ErrorText error={error} />
    </div>
  );
}

export function Organizations(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  orgId: string | null;
  onSelect: (orgId: string) => void;
}) {
  const [orgs, setOrgs] = useState<Org[] | null>(null);
  const [name, setName] = useState('');
  const { busy, error, run } = useAction(props.onSignedOut);
  const { haven, onSelect, orgId } = props;
  useEffect(() => {
    void run(async () => {
      const listed = await haven.orgs.list();
      setOrgs(listed);
      if (!orgId && listed[0]) {
        onSelect(listed[0].id);
      }
    });
  }, [haven]);
  return (
    <Section title="Organizations" id="orgs">
      {orgs === null ? (
        <p class="loading">Loading organizations…</p>
      ) : orgs.length === 0 ? (
        <Empty>No organization yet: create one to mint API keys.</Empty>
      ) : (
        <ul class="choices" aria-label="Your organizations">
          {orgs.map((org) => (
            <li key={org.id}>
              <button
                type="button"
                aria-pressed={org.id === orgId}
                onClick={() => onSelect(org.id)}
              >
                {org.name} <span class="muted">({org.tier})</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const created = await haven.orgs.create({ name: name.trim() });
            setName('');
            setOrgs(await haven.orgs.list());
            onSelect(created.id);
          });
        }}
      >
        <label for="org-name">Name</label>
        <input
          id="org-name"
          value={name}
          onInput={(event) => setName((event.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          Create organization
        </button>
      </form>
      <ErrorText error={error} />
      {orgId ? <Members haven={haven} orgId={orgId} onSignedOut={props.onSignedOut} /> : null}
    </Section>
  );
}
