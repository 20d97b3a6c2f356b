import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutboxOptionsError } from '../../common/errors/outbox-options.error';
import { resolveRelayOptions } from '../../relay/relay.options';
import { KafkaClientUnavailableError, loadWith, satisfies } from './platformatic-kafka.loader';

/** A `require` that finds a fake `@platformatic/kafka` with this package.json (or none). */
function fakeRequire(
  dir: string,
  manifest: Record<string, unknown> | undefined,
  load: () => unknown = () => ({ Producer: class {} }),
): NodeJS.Require {
  const entry = join(dir, 'node_modules/@platformatic/kafka/dist/index.js');
  if (manifest) {
    mkdirSync(join(dir, 'node_modules/@platformatic/kafka/dist'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules/@platformatic/kafka/package.json'),
      JSON.stringify(manifest),
    );
    writeFileSync(entry, '');
  }
  const req = (() => load()) as unknown as NodeJS.Require;
  req.resolve = ((id: string) => {
    if (!manifest)
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    return entry;
  }) as NodeJS.RequireResolve;
  return req;
}

describe('loading @platformatic/kafka (relay.kafka.client: "platformatic")', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-pk-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const thrown = (fn: () => unknown): KafkaClientUnavailableError => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(KafkaClientUnavailableError);
      return error as KafkaClientUnavailableError;
    }
    throw new Error('expected KafkaClientUnavailableError, nothing was thrown');
  };

  it('not installed: a typed error naming the option and the install command', () => {
    const error = thrown(() => loadWith(fakeRequire(dir, undefined), '20.20.2'));
    expect(error.code).toBe('OUTBOX_KAFKA_CLIENT_UNAVAILABLE');
    expect(error.option).toBe('relay.kafka.client');
    expect(error.message).toContain('@platformatic/kafka is not installed');
    expect(error.message).toContain('npm install @platformatic/kafka@"^1.35.0 || ^2.0.0"');
    expect(error.message).toContain('relay.kafka.client: "kafkajs"');
  });

  it('2.x on Node.js 20: a typed error naming both versions', () => {
    const manifest = {
      name: '@platformatic/kafka',
      version: '2.1.0',
      engines: { node: '>= 22.22.0' },
    };
    const error = thrown(() => loadWith(fakeRequire(dir, manifest), '20.20.2'));
    expect(error.message).toContain('needs Node.js ">= 22.22.0" and this is Node.js 20.20.2');
    expect(error.context).toMatchObject({ node: '20.20.2', version: '2.1.0' });
  });

  it('1.35 on Node.js 20.18: refused (it asks for 20.19.4)', () => {
    const manifest = {
      name: '@platformatic/kafka',
      version: '1.35.0',
      engines: { node: '>= 20.19.4 || >= 22.18.0 || >= 24.6.0' },
    };
    thrown(() => loadWith(fakeRequire(dir, manifest), '20.18.0'));
    expect(loadWith(fakeRequire(dir, manifest), '20.19.4')).toBeDefined();
  });

  it('a version outside the peer range: refused', () => {
    const manifest = { name: '@platformatic/kafka', version: '1.20.0', engines: { node: '>= 20' } };
    const error = thrown(() => loadWith(fakeRequire(dir, manifest), '22.22.0'));
    expect(error.message).toContain('1.20.0, outside "^1.35.0 || ^2.0.0"');
  });

  it('a load failure (e.g. an ES module Node.js cannot require): typed, with the cause', () => {
    const manifest = {
      name: '@platformatic/kafka',
      version: '2.0.0',
      engines: { node: '>= 22.22.0' },
    };
    const cause = Object.assign(new Error('require() of ES Module'), { code: 'ERR_REQUIRE_ESM' });
    const error = thrown(() =>
      loadWith(
        fakeRequire(dir, manifest, () => {
          throw cause;
        }),
        '24.6.0',
      ),
    );
    expect(error.message).toContain('did not load on Node.js 24.6.0');
    expect((error as { cause?: unknown }).cause).toBe(cause);
  });

  it('no Node.js require at all (Node.js without process.getBuiltinModule): typed', () => {
    expect(thrown(() => loadWith(undefined, '18.20.0')).message).toContain('Node.js 18.20.0');
  });

  it.each([
    ['20.20.2', '>= 20.19.4 || >= 22.18.0 || >= 24.6.0', true],
    ['20.19.3', '>= 20.19.4', false],
    ['22.21.9', '>= 22.22.0', false],
    ['24.0.0', '>= 22.22.0', true],
    ['1.35.0', '^1.35.0 || ^2.0.0', true],
    ['2.3.1', '^1.35.0 || ^2.0.0', true],
    ['1.34.9', '^1.35.0 || ^2.0.0', false],
    ['3.0.0', '^1.35.0 || ^2.0.0', false],
    ['20.5.0', '>=18 <21', true],
    ['21.0.0', '>=18 <21', false],
  ])('satisfies(%s, %s) is %s', (version, range, expected) => {
    expect(satisfies(version, range)).toBe(expected);
  });
});

describe('relay.kafka.client', () => {
  const kafka = { brokers: ['127.0.0.1:9092'] };

  it('is "kafkajs" (the default) or "platformatic"', () => {
    expect(resolveRelayOptions({ kafka }).kafka?.client).toBeUndefined();
    expect(resolveRelayOptions({ kafka: { ...kafka, client: 'kafkajs' } }).kafka?.client).toBe(
      'kafkajs',
    );
    expect(resolveRelayOptions({ kafka: { ...kafka, client: 'platformatic' } }).kafka?.client).toBe(
      'platformatic',
    );
  });

  it('anything else: OutboxOptionsError naming relay.kafka.client', () => {
    const resolve = () =>
      resolveRelayOptions({ kafka: { ...kafka, client: 'rdkafka' as 'kafkajs' } });
    expect(resolve).toThrow(OutboxOptionsError);
    expect(resolve).toThrow(
      /relay\.kafka\.client.*expected "kafkajs" or "platformatic", got "rdkafka"/,
    );
  });
});
