import type { mongo } from 'mongoose';

/**
 * What the relay's majority time rests on, from the server's `hello`: a replica set member
 * reports `lastWrite.majorityWriteDate`; a `mongos` answers `msg: "isdbgrid"` and no `lastWrite`
 * (https://www.mongodb.com/docs/manual/reference/command/hello/#sharded-instances); a standalone
 * neither.
 */
export type DeploymentKind = 'replica-set' | 'mongos' | 'standalone';

export function deploymentKindOf(hello: mongo.Document): DeploymentKind {
  if (hello.msg === 'isdbgrid') return 'mongos';
  return typeof hello.setName === 'string' ? 'replica-set' : 'standalone';
}

/**
 * The warning the relay logs at start through a `mongos`: what holds for scheduled events there,
 * undefined elsewhere. See docs/relay.md, "Through mongos".
 */
export function deploymentWarning(kind: DeploymentKind): string | undefined {
  if (kind !== 'mongos') return undefined;
  return (
    'Connected through mongos: hello reports no lastWrite there, so the relay takes the due time of ' +
    "scheduled events from the mongos's clock or from a majority write on the shard holding the " +
    "relay state, not from the shard holding the outbox documents; a cancel's $$NOW comes from " +
    'that shard. A cancel committed just before the due time may lose the race with the relay ' +
    '(docs/relay.md, "Through mongos"). Keep the clocks in step (NTP), or cancel well before the due time.'
  );
}
