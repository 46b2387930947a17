// The audit log: a family's or an org's timeline, paginated, verified in the browser.
import type { Haven } from '@haven/sdk';
import type { OnSignedOut } from './ui.js';
import { Section } from './ui.js';

export function OrgAuditLog(_props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  orgId: string | null;
  onSelectOrg: (orgId: string) => void;
}) {
  return (
    <Section title="Audit log" id="audit-log">
      {null}
    </Section>
  );
}

export function FamilyAuditLog(_props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  familyId: string;
}) {
  return (
    <Section title="Audit log" id="family-audit-log">
      {null}
    </Section>
  );
}
