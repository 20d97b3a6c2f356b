import { KAFKA_HEADERS } from '../documents/outbox-event.envelope';

/**
 * The Kafka header that carries an event's tenant (a CloudEvents extension attribute in binary
 * mode, like the other `ce_*` headers). Set by the relay from the outbox document's `tenant`.
 */
export const TENANT_HEADER = KAFKA_HEADERS.tenant;
