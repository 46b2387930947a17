// MCP tokens: mint one for a family (shown once), list, revoke.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { NewSecret } from './api-keys.js';
import { FamilySelect, isDemoFamily, useFamilies } from './families.js';
import {
  ConfirmButton,
  Empty,
  ErrorText,
  HeaderRow,
  type OnSignedOut,
  Section,
  useAction,
  when,
} from './ui.js';

type Token = Result<'listMcpTokens'>[number];

export function McpTokens(props: { haven: Haven; onSignedOut: OnSignedOut }) {
  const { haven } = props;
  const { busy, error, run } = useAction(props.onSignedOut);
  // Every family the user is shown: any member (a guardian too) may bind a token to its
  // family, and in the sandbox the demo family too (the token reads it; its writes are
  // refused). The user's list holds no other family, so each choice succeeds.
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
          <FamilySelect id="mcp-family" families={families} value={chosen} onChange={setFamilyId} />
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
      {isDemoFamily(chosen) ? (
        <p class="muted">
          A token on the demo family lets an assistant read it; its changes are refused (the demo
          family is read-only).
        </p>
      ) : null}
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
            <HeaderRow columns={['Label', 'Prefix', 'Family', 'Last used', 'Status']} />
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
                      <ConfirmButton
                        label="Revoke"
                        question={`Revoke ${token.label}? Its next use is refused.`}
                        disabled={busy}
                        onConfirmed={() =>
                          run(async () => {
                            await haven.mcpTokens.revoke(token.id);
                            await reload();
                          })
                        }
                      />
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
