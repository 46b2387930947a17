// The families the signed-in user belongs to, for the screens that act on one.
import { DEMO_FAMILY_ID, type Haven, type Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';

export type Family = Result<'listFamilies'>[number];

export function useFamilies(haven: Haven, run: (action: () => Promise<void>) => Promise<void>) {
  const [families, setFamilies] = useState<Family[] | null>(null);
  useEffect(() => void run(async () => setFamilies(await haven.families.list())), [haven]);
  return families;
}

/**
 * The families a change can be made to: all but the sandbox's demo family, which every
 * sandbox user is shown and nobody may change (a picker offers only what can succeed).
 */
export function changeableFamilies(families: Family[] | null): Family[] | null {
  return families === null ? null : families.filter((family) => !isDemoFamily(family.id));
}

/**
 * The families the caller may change (owner or parent: a guardian only reads), the demo
 * family left out: what a webhook or any other write can be made on. The role is read from
 * each family's members (the family list does not carry it).
 */
export function useWritableFamilies(
  haven: Haven,
  run: (action: () => Promise<void>) => Promise<void>,
): Family[] | null {
  const [families, setFamilies] = useState<Family[] | null>(null);
  useEffect(
    () =>
      void run(async () => {
        const [me, all] = await Promise.all([haven.auth.me(), haven.families.list()]);
        const own = changeableFamilies(all) ?? [];
        const roles = await Promise.all(
          own.map(async (family) => {
            const members = await haven.families.listMembers(family.id);
            return members.find((member) => member.user_id === me.id)?.role;
          }),
        );
        setFamilies(own.filter((_, i) => roles[i] === 'owner' || roles[i] === 'parent'));
      }),
    [haven],
  );
  return families;
}

export function isDemoFamily(familyId: string): boolean {
  return familyId === DEMO_FAMILY_ID;
}

/** The family an action is for: the chosen one, or the first listed. */
export function FamilySelect(props: {
  id: string;
  families: Family[] | null;
  value: string;
  onChange: (familyId: string) => void;
}) {
  return (
    <>
      <label for={props.id}>Family</label>
      <select
        id={props.id}
        value={props.value}
        onChange={(event) => props.onChange((event.target as HTMLSelectElement).value)}
      >
        {(props.families ?? []).map((family) => (
          <option key={family.id} value={family.id}>
            {family.name}
          </option>
        ))}
      </select>
    </>
  );
}
