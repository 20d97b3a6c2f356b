import { execFileSync } from 'node:child_process';
import * as kafkajs from 'kafkajs';
import {
  KAFKA_CLIENT_ERROR_GROUPS,
  KAFKA_PROTOCOL_ERROR_GROUPS,
  scopeOfKafkaType,
} from './kafka-error.table';

/** kafkajs' list of Kafka protocol errors (kafkajs/src/protocol/error.js): name, code, retriable. */
const kafkajsCodes = (
  require('kafkajs/src/protocol/error') as {
    errorCodes: Array<{ type: string; code: number; retriable: boolean }>;
  }
).errorCodes;
/**
 * @platformatic/kafka's (dist/protocol/errors.js, codes -1 to 127): id, code, canRetry. Read by
 * a child process: it is an ES module, which Node's `require` loads and Jest's does not.
 */
const platformaticCodes = (
  JSON.parse(
    execFileSync(
      process.execPath,
      [
        '-e',
        "import('@platformatic/kafka').then((m) => process.stdout.write(JSON.stringify(Object.values(m.protocolErrors))))",
      ],
      { encoding: 'utf8' },
    ),
  ) as Array<{ id: string; code: number; canRetry: boolean }>
).filter((error) => error.id !== 'NONE');

const listed = KAFKA_PROTOCOL_ERROR_GROUPS.flatMap((group) => group.errors);

describe('the Kafka error table (kafka-error.table.ts)', () => {
  it("lists every protocol error of kafkajs' and @platformatic/kafka's lists, each once", () => {
    const known = new Set([
      ...kafkajsCodes.map((error) => error.type),
      ...platformaticCodes.map((error) => error.id),
      'KAFKAJS_UNKNOWN_ERROR_CODE', // kafkajs' type for a code it does not know
    ]);
    expect([...known].filter((name) => !listed.includes(name))).toEqual([]);
    expect(listed.filter((name) => !known.has(name))).toEqual([]);
    expect(listed.filter((name, i) => listed.indexOf(name) !== i)).toEqual([]);
  });

  it('dead-letters at once no error that Kafka calls retriable (in either client)', () => {
    const retriable = new Set([
      ...kafkajsCodes.filter((error) => error.retriable).map((error) => error.type),
      ...platformaticCodes.filter((error) => error.canRetry).map((error) => error.id),
    ]);
    const permanent = [...retriable].filter((name) =>
      ['size', 'invalid-topic'].includes(scopeOfKafkaType(name)),
    );
    expect(permanent).toEqual([]);
  });

  it('gives the same name under both clients the same scope (same code, two names)', () => {
    for (const { code, type } of kafkajsCodes) {
      const other = platformaticCodes.find((error) => error.code === code);
      if (other) expect([code, scopeOfKafkaType(other.id)]).toEqual([code, scopeOfKafkaType(type)]);
    }
  });

  it("names only kafkajs' own error classes, and the publisher's (Outbox...)", () => {
    const names = KAFKA_CLIENT_ERROR_GROUPS.flatMap((group) => group.errors);
    const exported = new Set(Object.keys(kafkajs).filter((key) => key.startsWith('KafkaJS')));
    // Exported by kafkajs at runtime (errors.js), missing from its typings' named exports.
    for (const key of Object.keys(require('kafkajs/src/errors'))) exported.add(key);
    expect(names.filter((name) => !name.startsWith('Outbox') && !exported.has(name))).toEqual([]);
  });
});
