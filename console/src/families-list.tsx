// Families: a table of the caller's families, newest first as the API lists them, each name a
// link to the family's page. The sandbox's demo family is marked read-only.
import type { Haven } from '@haven/sdk';
import { isDemoFamily, useFamilies } from './families.js';
import { href } from './router.js';
import { Empty, ErrorText, type OnSignedOut, Section, useAction, when } from './ui.js';

export function FamiliesList(props: { haven: Haven; onSignedOut: OnSignedOut }) {
  const { error, run } = useAction(props.onSignedOut);
  const families = useFamilies(props.haven, run);
  return (
    <Section title="Families" id="families">
      <ErrorText error={error} />
      {families === null ? (
        error ? null : (
          <p class="loading">Loading families…</p>
        )
      ) : families.length === 0 ? (
        <Empty>
          No family yet. A parent's app creates one (POST /api/v1/families, or the quick setup); it
          is listed here once it exists.
        </Empty>
      ) : (
        <div class="scroll contained">
          <table class="families">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Clock</th>
              </tr>
            </thead>
            <tbody>
              {families.map((family) => (
                <tr key={family.id}>
                  <td>
                    <a href={href({ view: 'family', familyId: family.id })}>{family.name}</a>
                    {isDemoFamily(family.id) ? <span class="tag">read-only</span> : null}
                  </td>
                  <td>{when(family.created_at)}</td>
                  <td>
                    {family.test_clock_id ? (
                      <>
                        test clock <code>{family.test_clock_id}</code>
                      </>
                    ) : (
                      'real'
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
