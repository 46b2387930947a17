// A family's enforcement jobs, newest first; a job's one row per platform.
import type { Haven } from '@haven/sdk';
import type { OnSignedOut } from './ui.js';
import { Section } from './ui.js';

export function EnforcementSection(_props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  familyId: string;
}) {
  return (
    <Section title="Enforcement" id="enforcement">
      {null}
    </Section>
  );
}
