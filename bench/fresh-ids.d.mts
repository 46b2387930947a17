// Types of fresh-ids.mjs, for the TypeScript that calls it (the floor statement's test).
export declare function freshIdWriter(
  parameters: readonly unknown[],
  freshIds: readonly string[],
): () => { parameters: unknown[]; newIds: Map<string, string> };
