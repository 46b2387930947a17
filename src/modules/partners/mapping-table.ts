// The rule-to-partner mapping as the Markdown table docs/decisions.md carries, rendered from
// the partner modules themselves: mapping-table.test.ts fails when the two differ, and
// `npm run mapping-table` prints the table to paste.
import { RULE_REGISTRY } from '../rules/registry.js';
import { LIVE_PARTNERS } from './live-partners.js';

export const TABLE_START = '<!-- partner-mapping:start (npm run mapping-table) -->';
export const TABLE_END = '<!-- partner-mapping:end -->';

const NONE = '— (rules_skipped)';

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

export function renderMappingTable(): string {
  const header = ['Rule category', ...LIVE_PARTNERS.map((partner) => partner.name)];
  const lines = [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...RULE_REGISTRY.map((rule) => {
      const cells = LIVE_PARTNERS.map((partner) => {
        const mapping = partner.mapping[rule.category];
        return mapping ? cell(mapping.drives) : NONE;
      });
      return `| \`${rule.category}\` | ${cells.join(' | ')} |`;
    }),
  ];
  return [TABLE_START, ...lines, TABLE_END].join('\n');
}
