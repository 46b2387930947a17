// A child's policy: one row per rule category, each editable through its config schema.
import type { Haven } from '@haven/sdk';
import type { OnSignedOut } from './ui.js';
import { Section } from './ui.js';

export function PolicyPage(_props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  familyId: string;
  childId: string;
}) {
  return (
    <Section title="Policy" id="policy">
      {null}
    </Section>
  );
}
