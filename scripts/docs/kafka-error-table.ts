/**
 * Renders the table "Kafka error -> scope -> what happens to the event" of docs/relay.md from
 * the classifier's table (lib/publisher/kafka/kafka-error.table.ts), its one source. The docs'
 * copy sits between the two markers below; test/readme/kafka-error-table.spec.ts fails when it
 * differs from the rendering.
 *
 * Write it into docs/relay.md: node -r ts-node/register/transpile-only scripts/docs/kafka-error-table.ts --write
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  KAFKA_CLIENT_ERROR_GROUPS,
  KAFKA_PROTOCOL_ERROR_GROUPS,
  KAFKA_SCOPE_CONSEQUENCES,
} from '../../lib/publisher/kafka/kafka-error.table';
import type { KafkaErrorGroup } from '../../lib/publisher/kafka/kafka-error.table';

export const TABLE_START =
  '<!-- kafka-error-table: generated from lib/publisher/kafka/kafka-error.table.ts by scripts/docs/kafka-error-table.ts -->';
export const TABLE_END = '<!-- /kafka-error-table -->';
export const DOC_FILE = 'docs/relay.md';

function rows(heading: string, groups: readonly KafkaErrorGroup[]): string[] {
  const lines = [
    `| ${heading} | why | scope | what happens to the event |`,
    '| --- | --- | --- | --- |',
  ];
  for (const group of groups) {
    const errors = group.errors.map((name) => `\`${name}\``).join(', ');
    const reason = group.reason.replace(/\|/g, '\\|');
    lines.push(
      `| ${errors} | ${reason} | \`${group.scope}\` | ${KAFKA_SCOPE_CONSEQUENCES[group.scope]} |`,
    );
  }
  return lines;
}

/** The table as it stands in the docs, markers included. */
export function renderKafkaErrorTable(): string {
  return [
    TABLE_START,
    '',
    ...rows('Kafka protocol error (`type`)', KAFKA_PROTOCOL_ERROR_GROUPS),
    '',
    ...rows('client error (`name`)', KAFKA_CLIENT_ERROR_GROUPS),
    '',
    TABLE_END,
  ].join('\n');
}

/** The docs' copy of the table, markers included, or undefined without the markers. */
export function documentedKafkaErrorTable(text: string): string | undefined {
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END);
  if (start < 0 || end < start) return undefined;
  return text.slice(start, end + TABLE_END.length);
}

if (require.main === module && process.argv.includes('--write')) {
  const file = join(__dirname, '..', '..', DOC_FILE);
  const text = readFileSync(file, 'utf8');
  const documented = documentedKafkaErrorTable(text);
  if (documented === undefined)
    throw new Error(`${DOC_FILE} has no ${TABLE_START} ... ${TABLE_END}`);
  writeFileSync(file, text.replace(documented, renderKafkaErrorTable()));
  process.stdout.write(`${DOC_FILE}: Kafka error table written\n`);
}
