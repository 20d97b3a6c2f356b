import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type * as PlatformaticKafkaModule from '@platformatic/kafka';
import { OutboxError } from '../../common/errors/outbox.error';

export type PlatformaticKafka = typeof PlatformaticKafkaModule;

/** The versions of `@platformatic/kafka` the relay is written against (its peer range). */
export const PLATFORMATIC_KAFKA_RANGE = '^1.35.0 || ^2.0.0';

const PACKAGE = '@platformatic/kafka';
const OPTION = 'relay.kafka.client';

/**
 * `relay.kafka.client` is `'platformatic'` and `@platformatic/kafka` cannot run here: not
 * installed, a version outside `PLATFORMATIC_KAFKA_RANGE`, or a Node.js older than the one it
 * asks for. Thrown at bootstrap, when the relay's publisher is created.
 */
export class KafkaClientUnavailableError extends OutboxError {
  readonly option = OPTION;

  constructor(
    problem: string,
    fix: string,
    context: Record<string, unknown> = {},
    cause?: unknown,
  ) {
    super(
      `${OPTION} is "platformatic" but ${problem}. ${fix} Or set ${OPTION}: "kafkajs" (the default).`,
      'OUTBOX_KAFKA_CLIENT_UNAVAILABLE',
      { option: OPTION, ...context },
    );
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/**
 * Node's own `require`, also from the ES module build (where `require` is not defined) and
 * under test runners that replace it: `@platformatic/kafka` is an ES module, which Node's
 * `require` loads itself from 20.19 on.
 */
function nodeRequire(): NodeJS.Require | undefined {
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const nodeModule = getBuiltin?.('node:module') as typeof import('node:module') | undefined;
  if (!nodeModule) return undefined;
  const from = typeof __filename === 'string' ? __filename : join(process.cwd(), 'index.js');
  return nodeModule.createRequire(from);
}

let loaded: PlatformaticKafka | undefined;

/**
 * `@platformatic/kafka`, an optional peer dependency, loaded on first use (never when the relay
 * uses kafkajs). Throws `KafkaClientUnavailableError` naming what is missing and the fix.
 */
export function loadPlatformaticKafka(): PlatformaticKafka {
  loaded ??= loadWith(nodeRequire(), process.versions.node);
  return loaded;
}

/** `loadPlatformaticKafka` with a given `require` and Node.js version (tests give their own). */
export function loadWith(req: NodeJS.Require | undefined, node: string): PlatformaticKafka {
  if (!req) {
    throw new KafkaClientUnavailableError(
      `Node.js ${node} cannot load it (it is an ES module: Node.js loads it from CommonJS from 20.19 on)`,
      `Run Node.js >= 20.19.4 (22.22 or later for @platformatic/kafka 2.x).`,
      { node },
    );
  }
  let entry: string;
  try {
    entry = req.resolve(PACKAGE);
  } catch (error) {
    throw new KafkaClientUnavailableError(
      `${PACKAGE} is not installed`,
      `Install it: npm install ${PACKAGE}@"${PLATFORMATIC_KAFKA_RANGE}".`,
      { node },
      error,
    );
  }
  const manifest = readManifest(entry);
  if (manifest?.version && !satisfies(manifest.version, PLATFORMATIC_KAFKA_RANGE)) {
    throw new KafkaClientUnavailableError(
      `the installed ${PACKAGE} is ${manifest.version}, outside "${PLATFORMATIC_KAFKA_RANGE}"`,
      `Install a supported version: npm install ${PACKAGE}@"${PLATFORMATIC_KAFKA_RANGE}".`,
      { node, version: manifest.version },
    );
  }
  const engines = manifest?.engines?.node;
  if (engines && !satisfies(node, engines)) {
    throw new KafkaClientUnavailableError(
      `${PACKAGE} ${manifest.version ?? ''} needs Node.js "${engines}" and this is Node.js ${node}`,
      `Run a Node.js it supports, or install ${PACKAGE}@1.35 (Node.js >= 20.19.4).`,
      { node, version: manifest.version, engines },
    );
  }
  try {
    return req(PACKAGE) as PlatformaticKafka;
  } catch (error) {
    throw new KafkaClientUnavailableError(
      `${PACKAGE} ${manifest?.version ?? ''} did not load on Node.js ${node} (${String(error)})`,
      `Run Node.js >= 20.19.4 (22.22 or later for ${PACKAGE} 2.x).`,
      { node, version: manifest?.version },
      error,
    );
  }
}

interface Manifest {
  name?: string;
  version?: string;
  engines?: { node?: string };
}

/** The package's own package.json, found from its entry file (its `exports` hide it). */
function readManifest(entry: string): Manifest | undefined {
  for (let dir = dirname(entry), up = 0; up < 5; dir = dirname(dir), up++) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    try {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
      if (manifest.name === PACKAGE) return manifest;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

type Version = [number, number, number];

function parse(version: string): Version | undefined {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * Whether `version` is in `range`: alternatives joined by `||`, each comparators (`>=`, `>`,
 * `<=`, `<`, `=`, `^`, `~` or a bare version) that must all hold. A comparator it cannot read
 * holds (the package's own load decides then).
 */
export function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  if (!v) return true;
  return range.split('||').some((alternative) =>
    alternative
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .trim()
      .split(/\s+/)
      .filter((comparator) => comparator !== '')
      .every((comparator) => holds(v, comparator)),
  );
}

/** Each operator's test, from `order` (`compare(v, bound)`); a bare version or `=`: equal. */
const OPERATORS: Record<string, (order: number, v: Version, bound: Version) => boolean> = {
  '>=': (order) => order >= 0,
  '>': (order) => order > 0,
  '<=': (order) => order <= 0,
  '<': (order) => order < 0,
  '^': (order, v, bound) => order >= 0 && (bound[0] > 0 ? v[0] === bound[0] : v[1] === bound[1]),
  '~': (order, v, bound) => order >= 0 && v[0] === bound[0] && v[1] === bound[1],
};

function holds(v: Version, comparator: string): boolean {
  const match = /^(>=|<=|>|<|=|\^|~)?(.*)$/.exec(comparator);
  const bound = match ? parse(match[2]) : undefined;
  if (!match || !bound) return true;
  const test = OPERATORS[match[1]] ?? ((order: number) => order === 0);
  return test(compare(v, bound), v, bound);
}
