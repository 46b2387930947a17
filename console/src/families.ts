// The families the signed-in user belongs to, for the screens that act on one.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';

export type Family = Result<'listFamilies'>[number];

export function useFamilies(haven: Haven, run: (action: () => Promise<void>) => Promise<void>) {
  const [families, setFamilies] = useState<Family[] | null>(null);
  useEffect(() => void run(async () => setFamilies(await haven.families.list())), [haven]);
  return families;
}
