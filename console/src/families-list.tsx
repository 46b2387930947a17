// Families: a table of the caller's families, each linking to its page.
import type { Haven } from '@haven/sdk';
import type { OnSignedOut } from './ui.js';
import { Section } from './ui.js';

export function FamiliesList(_props: { haven: Haven; onSignedOut: OnSignedOut }) {
  return (
    <Section title="Families" id="families">
      {null}
    </Section>
  );
}
