// Helpers for the PostgreSQL server that holds the test databases (no vitest import: the
// global setup uses them too).
import pg from 'pg';

export type TemplateInfo =
  | { backend: 'postgres'; adminUrl: string; template: string }
  | { backend: 'pglite'; dumpPath: string; blankPath: string };

export function databaseUrlFor(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withAdminClient<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
