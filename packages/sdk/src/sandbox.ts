// The sandbox's seeded demo family (CONTRACT.md §6): the same id on every deployment and every
// restart. Every sandbox caller reads it and may bind an MCP token to it; every write to it,
// a webhook included, answers 403 `demo family is read-only`.
export const DEMO_FAMILY_ID = 'd3e0f000-0000-4000-8000-000000000001';
