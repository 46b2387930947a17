// npm run mapping-table: prints the rule-to-partner mapping table for docs/decisions.md.
import { renderMappingTable } from '../modules/partners/mapping-table.js';

process.stdout.write(`${renderMappingTable()}\n`);
