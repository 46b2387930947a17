// A family's page: its children, connections, enforcement, devices and audit log.
import type { Haven } from '@haven/sdk';
import type { OnSignedOut } from './ui.js';
import { Section } from './ui.js';

export function FamilyPage(_props: { haven: Haven; onSignedOut: OnSignedOut; familyId: string }) {
  return (
    <Section title="Family" id="family">
      {null}
    </Section>
  );
}
