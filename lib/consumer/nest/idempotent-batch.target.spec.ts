import type { IdempotentHandlerSettings } from '../idempotent-handler.options';
import { anyIdempotentHandler, idempotentBatchTargetOf } from './idempotent-batch.target';
import {
  IdempotentHandlerBindings,
  type IdempotentHandlerRuntimeApi,
} from './idempotent-handler.bindings';

const settings = { handler: 'Billing.on', consumer: 'billing' } as IdempotentHandlerSettings;
const runtime = (maxEvents: number) =>
  ({ batchLimits: { maxEvents, maxBytes: 1024 } }) as unknown as IdempotentHandlerRuntimeApi;
/** A Nest pattern handler as `Server.addHandler` keeps it. */
const handler = (extras: object, next?: unknown) =>
  Object.assign(async () => undefined, { extras, isEventHandler: true, next });
const idempotent = (next?: unknown) => handler({ 'outbox:idempotent_handler': settings }, next);

describe('which messages OutboxKafkaServer may batch', () => {
  let bound: IdempotentHandlerRuntimeApi | undefined;
  const bind = (r: IdempotentHandlerRuntimeApi) => {
    bound = r;
    IdempotentHandlerBindings.bind(settings, r);
  };
  afterEach(() => bound && IdempotentHandlerBindings.unbind(settings, bound));

  it('an @IdempotentHandler alone on its pattern, bound to a runtime batching more than 1', () => {
    const r = runtime(100);
    bind(r);
    expect(idempotentBatchTargetOf(idempotent())).toEqual({ runtime: r, settings });
  });

  it('not: no handler, a plain handler, several handlers, no runtime yet, maxEvents 1', () => {
    expect(idempotentBatchTargetOf(null)).toBeUndefined();
    bind(runtime(100));
    expect(idempotentBatchTargetOf(handler({}))).toBeUndefined();
    expect(idempotentBatchTargetOf(idempotent(handler({})))).toBeUndefined();
    IdempotentHandlerBindings.unbind(settings, bound!);
    expect(idempotentBatchTargetOf(idempotent())).toBeUndefined();
    bind(runtime(1));
    expect(idempotentBatchTargetOf(idempotent())).toBeUndefined();
  });

  it('tells whether a transport has any @IdempotentHandler, also behind another handler', () => {
    expect(anyIdempotentHandler([handler({}), handler({}, handler({}))])).toBe(false);
    expect(anyIdempotentHandler([handler({}, idempotent())])).toBe(true);
  });
});
