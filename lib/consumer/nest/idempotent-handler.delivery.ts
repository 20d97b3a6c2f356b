import { Logger } from '@nestjs/common';
import { describeError } from '../../common/errors/describe-error';
import { inConsumerSpan } from '../../telemetry/tracing/consumer-span';
import { OutboxError } from '../../common/errors/outbox.error';
import { findKafkaContext, type KafkaContextLike } from '../input/consumed-message';
import type { ConsumeOutcome } from '../consume.ports';
import { backoffDelay } from '../../common/backoff';
import { SINK_BACKOFF } from '../flow/consumer-sink';
import { isConsumerRetryError } from '../consumer.errors';
import { BatchAbortedError } from '../batch/consume-batch.scope';
import { IdempotentHandlerBindings } from './idempotent-handler.bindings';
import type { IdempotentHandlerSettings } from '../idempotent-handler.options';
import { kafkaDelivery, redeliver, type KafkaDelivery } from './kafka-delivery';
import { substitutePayload, type RpcParameters } from './nest-internals';

const logger = new Logger('IdempotentHandler');

/**
 * What the wrapper installed by `@IdempotentHandler` does when Nest calls the method: finds the
 * runtime its `OutboxModule` bound to the method, runs the delivery to its end, and returns the
 * handler's value (applied) or `undefined` (duplicate, dead-lettered): Nest then acknowledges.
 */
export async function deliverToHandler(
  settings: IdempotentHandlerSettings,
  parameters: RpcParameters,
  method: (...args: unknown[]) => unknown,
  instance: unknown,
  args: unknown[],
): Promise<unknown> {
  const context = findKafkaContext(args);
  if (!context) {
    throw new OutboxError(
      `@IdempotentHandler ${settings.handler} was called without a KafkaContext argument;` +
        ' it only serves @EventPattern handlers of the Kafka transport.',
      'OUTBOX_IDEMPOTENT_HANDLER_NO_CONTEXT',
      { handler: settings.handler },
    );
  }
  const delivery = kafkaDelivery(context);
  const runtime = runtimeOrRedeliver(settings, delivery);
  const outcome = await inConsumerSpan(
    delivery.message,
    settings.consumer,
    () =>
      runtime.consume(delivery, settings, (payload) =>
        method.apply(instance, substitutePayload(args, parameters, payload)),
      ),
    (ended) => ended.kind,
  );
  markEnded(context, settings, outcome);
  return outcome.kind === 'applied' ? outcome.result : undefined;
}

/**
 * What the method's exception filter does with an error of its pipeline. A `ConsumerRetryError`
 * (the wrapper already decided: deliver again) is rethrown, so it reaches kafkajs. An error after
 * the delivery ended (e.g. an interceptor's, once the event was applied) is logged and the message
 * acknowledged. Any other error came from a guard, pipe or interceptor before the method ran: it
 * is counted toward `maxFailures` (then dead-lettered), or the message is delivered again.
 * Resolves to acknowledge; rejects (with a `ConsumerRetryError`) to have it delivered again.
 */
export async function deliverFailure(
  settings: IdempotentHandlerSettings,
  error: unknown,
  args: readonly unknown[],
): Promise<unknown> {
  if (isConsumerRetryError(error) || error instanceof BatchAbortedError) throw error;
  const context = findKafkaContext(args);
  if (!context) throw error; // not a Kafka delivery: nothing of ours to count
  const ended = endedDeliveries.get(context)?.get(settings);
  if (ended) {
    logger.warn(
      `${settings.handler}: error after the event was ${ended.kind} (acknowledged anyway): ${describeError(error)}`,
    );
    return undefined;
  }
  const delivery = kafkaDelivery(context);
  const runtime = runtimeOrRedeliver(settings, delivery);
  const outcome = await runtime.consumeRejected(delivery, settings, error);
  markEnded(context, settings, outcome);
  return undefined;
}

/** Deliveries that ended, per `KafkaContext` and handler (several handlers may share one message). */
const endedDeliveries = new WeakMap<object, Map<IdempotentHandlerSettings, ConsumeOutcome>>();

function markEnded(
  context: KafkaContextLike,
  settings: IdempotentHandlerSettings,
  outcome: ConsumeOutcome,
): void {
  let outcomes = endedDeliveries.get(context);
  if (!outcomes) endedDeliveries.set(context, (outcomes = new Map()));
  outcomes.set(settings, outcome);
}

/** Handlers waiting for their `OutboxModule`, with how many deliveries were sent back so far. */
const waiting = new Map<string, { since: Date; deliveries: number }>();

/**
 * The runtime bound to the method, or (no `OutboxModule` initialized for it: a hybrid app
 * consuming before `app.init()`, or during shutdown) a paused partition and a redelivery with
 * backoff, logged once when the wait starts and once when it ends.
 */
function runtimeOrRedeliver(settings: IdempotentHandlerSettings, delivery: KafkaDelivery) {
  const runtime = IdempotentHandlerBindings.resolve(settings);
  const state = waiting.get(settings.handler);
  if (runtime) {
    if (state) {
      waiting.delete(settings.handler);
      logger.log(
        `${settings.handler}: OutboxModule is initialized; consuming (waited since ${state.since.toISOString()}, ${state.deliveries} deliveries sent back).`,
      );
    }
    return runtime;
  }
  const next = state ?? { since: new Date(), deliveries: 0 };
  next.deliveries++;
  waiting.set(settings.handler, next);
  if (!state) {
    logger.warn(
      `${settings.handler}: a message arrived but no OutboxModule${settings.connectionName ? ` for connection '${settings.connectionName}'` : ''}` +
        ' is initialized yet; its partition is paused and the message delivered again until it is.' +
        ' Start the microservices after app.init() (or app.listen()).',
    );
  }
  throw redeliver(
    delivery,
    `${settings.handler}: OutboxModule is not initialized`,
    backoffDelay(next.deliveries, SINK_BACKOFF),
    undefined,
    { handler: settings.handler, consumer: settings.consumer },
  );
}
