// MCP tokens: mint one for a family (shown once), list, revoke.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { NewSecret } from './api-keys.js';
import { useFamilies } from './families.js';
import { Empty, ErrorText, type OnSignedOut, Section, useAction, when } from './ui.js';

type Token = Result<'listMcpTokens'>[number];

export function McpTokens(props: { haven: Haven; onSignedOut: OnSignedOut }) {
  const { haven } = props;
  const { busy, error, run } = useAction(props.onSignedOut);
  const families = useFamilies(haven, run);
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [familyId, setFamilyId] = useState('');
  const [label, setLabel] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const reload = async () => setTokens(await haven.mcpTokens.list());
  useEffect(() => void run(reload), [haven]);
  const chosen = familyId || families?.[0]?.id || '';
  return (
    <Section title="MCP tokens" id="mcp">
      {families !== null && families.length === 0 ? (
        <Empty>An MCP token opens one family: create a family first (e.g. a quick setup).</Empty>
      ) : (
        <form
          class="inline"
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              const minted = await haven.mcpTokens.create({
                family_id: chosen,
                label: label.trim(),
              });
              setSecret(minted.plain);
              setLabel('');
              await reload();
            });
          }}
        >
          <label for="mcp-family">Family</label>
          <select
            id="mcp-family"
            value={chosen}
            onChange={(event) => setFamilyId((event.target as HTMLSelectElement).value)}
          >
            {(families ?? []).map((family) => (
              <option key={family.id} value={family.id}>
                {family.name}
              </option>
            ))}
          </select>
          <label for="mcp-label">Label</label>
          <input
            id="mcp-label"
            value={label}
            onInput={(event) => setLabel((event.target as HTMLInputElement).value)}
          />
          <button type="submit" class="primary" disabled={busy || !chosen}>
            Mint token
          </button>
        </form>
      )}
      <ErrorText error={error} />
      {secret ? (
        <NewSecret label="New MCP token" secret={secret} onDone={() => setSecret(null)} />
      ) : null}
      {tokens === null ? (
        <p class="loading">Loading tokens…</p>
      ) : tokens.length === 0 ? (
        <Empty>No MCP token yet.</Empty>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Prefix</th>
                <th scope="col">Family</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id}>
                  <td>{token.label}</td>
                  <td>
                    <code>{token.token_prefix}</code>
                  </td>
                  <td>
                    {families?.find((f) => f.id === token.family_id)?.name ?? token.family_id}
                  </td>
                  <td>{when(token.last_used_at)}</td>
                  <td>{token.revoked_at ? 'revoked' : 'active'}</td>
                  <td>
                    {token.revoked_at ? null : (
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() => {
                          if (window.confirm(`Revoke ${token.label}?`)) {
                            void run(async () => {
                              await haven.mcpTokens.revoke(token.id);
                              await reload();
                            });
                          }
                        }}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
