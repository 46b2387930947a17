// docs/decisions.md carries the rule-to-partner mapping; it must be the one the code runs.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RULE_REGISTRY } from '../rules/registry.js';
import { LIVE_PARTNERS } from './live-partners.js';
import { renderMappingTable, TABLE_END, TABLE_START } from './mapping-table.js';

const DECISIONS = new URL('../../../docs/decisions.md', import.meta.url);

describe('the partner mapping table', () => {
  it('in docs/decisions.md is the one the adapters use (npm run mapping-table)', async () => {
    const decisions = await readFile(DECISIONS, 'utf8');
    const start = decisions.indexOf(TABLE_START);
    const end = decisions.indexOf(TABLE_END);
    expect(start, 'the table markers are in docs/decisions.md').toBeGreaterThanOrEqual(0);
    expect(decisions.slice(start, end + TABLE_END.length)).toBe(renderMappingTable());
  });

  it('has a row for each of the 123 categories, and maps only categories that exist', () => {
    const rows = renderMappingTable()
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    expect(rows).toHaveLength(123);
    const known = new Set(RULE_REGISTRY.map((rule) => rule.category));
    for (const partner of LIVE_PARTNERS) {
      for (const category of Object.keys(partner.mapping)) {
        expect(known.has(category), `${partner.platformId}: ${category}`).toBe(true);
      }
    }
  });

  it('drives a setting from each mapped category’s default config', () => {
    for (const partner of LIVE_PARTNERS) {
      for (const rule of RULE_REGISTRY) {
        const mapping = partner.mapping[rule.category];
        if (!mapping) {
          continue;
        }
        // app_block_list and the custom lists start empty; the rest protect by default.
        const wanted = mapping.map(rule.default_config);
        const count = (wanted.items ?? []).length + Object.keys(wanted.settings ?? {}).length;
        const startsEmpty = ['app_block_list', 'web_custom_blocklist', 'web_custom_allowlist'];
        expect(count > 0, `${partner.platformId}: ${rule.category}`).toBe(
          !startsEmpty.includes(rule.category),
        );
      }
    }
  });
});
