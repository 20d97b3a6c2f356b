import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DOC_FILE,
  documentedKafkaErrorTable,
  renderKafkaErrorTable,
} from '../../scripts/docs/kafka-error-table';

/** The docs' table of Kafka errors is the classifier's table (kafka-error.table.ts), rendered. */
describe('the Kafka error table of docs/relay.md', () => {
  it('is the rendering of the classifier table (rewrite it with the script named in the marker)', () => {
    const text = readFileSync(join(__dirname, '..', '..', DOC_FILE), 'utf8');
    const documented = documentedKafkaErrorTable(text);
    expect(documented).toBeDefined();
    // On a difference: node -r ts-node/register/transpile-only scripts/docs/kafka-error-table.ts --write
    expect(documented).toBe(renderKafkaErrorTable());
  });
});
