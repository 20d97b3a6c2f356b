/**
 * The only place where the consumer side reads metadata that Nest keeps private. Nest has no
 * public API to ask "which parameter is `@Payload()`", "is this method an `@EventPattern`
 * handler" or "which exception filters are bound to this method", and neither `@nestjs/common`
 * nor `@nestjs/microservices` exports these keys from its package root (only from deep paths,
 * which break with package `exports` maps). So they are spelled out here, and
 * `nest-internals.spec.ts` applies Nest's public decorators and checks that every reader below
 * still understands what they wrote: if Nest changes one of these, that spec fails by name.
 */

/** `ROUTE_ARGS_METADATA` (`@nestjs/common`), `PARAM_ARGS_METADATA` (`@nestjs/microservices`). */
const ROUTE_ARGS_METADATA = '__routeArguments__';
/** `RpcParamtype.PAYLOAD` and `RpcParamtype.CONTEXT` (`@nestjs/microservices`). */
const RPC_PAYLOAD = 3;
const RPC_CONTEXT = 6;
/** `PATTERN_HANDLER_METADATA` and `PatternHandler` (`@nestjs/microservices`). */
const PATTERN_HANDLER_METADATA = 'microservices:handler_type';
const PATTERN_HANDLER_MESSAGE = 1;
const PATTERN_HANDLER_EVENT = 2;
/** `PATTERN_METADATA` (`@nestjs/microservices`): the patterns of `@EventPattern(...)`. */
const PATTERN_METADATA = 'microservices:pattern';
/** `PATTERN_EXTRAS_METADATA` (`@nestjs/microservices`): the extras Nest hands the transport. */
const PATTERN_EXTRAS_METADATA = 'microservices:pattern_extras';
/** `EXCEPTION_FILTERS_METADATA` (`@nestjs/common`), written by `@UseFilters()`. */
const EXCEPTION_FILTERS_METADATA = '__exceptionFilters__';

/** Where `@Payload()` and `@Ctx()` put their values among the method's arguments. */
export interface RpcParameters {
  /** False when the method has no parameter decorators: Nest then passes `(data, context)`. */
  declared: boolean;
  /** Each `@Payload()` / `@Payload('property')` parameter. */
  payload: Array<{ index: number; property?: string }>;
  contextIndex?: number;
}

/** The `@Payload()` / `@Ctx()` parameters of `prototype[method]` (Nest keeps them on the class). */
export function rpcParametersOf(prototype: object, method: string | symbol): RpcParameters {
  const routeArgs = Reflect.getMetadata(ROUTE_ARGS_METADATA, prototype.constructor, method) as
    Record<string, { index: number; data?: unknown }> | undefined;
  if (!routeArgs || Object.keys(routeArgs).length === 0) {
    return { declared: false, payload: [{ index: 0 }], contextIndex: 1 };
  }
  const parameters: RpcParameters = { declared: true, payload: [] };
  for (const [key, meta] of Object.entries(routeArgs)) {
    // Keys are "<paramtype>:<index>" (custom decorators: "<factory id>__customRouteArgs__:<index>").
    const type = Number(key.split(':')[0]);
    if (type === RPC_PAYLOAD) {
      parameters.payload.push({
        index: meta.index,
        ...(typeof meta.data === 'string' ? { property: meta.data } : {}),
      });
    } else if (type === RPC_CONTEXT) {
      parameters.contextIndex = meta.index;
    }
  }
  return parameters;
}

/** The handler's arguments with each `@Payload()` parameter replaced from the decoded `payload`. */
export function substitutePayload(
  args: readonly unknown[],
  parameters: RpcParameters,
  payload: unknown,
): unknown[] {
  const next = [...args];
  for (const { index, property } of parameters.payload) {
    if (property === undefined) {
      next[index] = payload;
    } else {
      const isRecord = typeof payload === 'object' && payload !== null;
      next[index] =
        isRecord && Object.prototype.hasOwnProperty.call(payload, property)
          ? (payload as Record<string, unknown>)[property]
          : undefined;
    }
  }
  return next;
}

/** What kind of microservice handler `method` is (its `@EventPattern` / `@MessagePattern`). */
export function patternHandlerKind(method: object): 'event' | 'message' | undefined {
  const kind = Reflect.getMetadata(PATTERN_HANDLER_METADATA, method) as unknown;
  if (kind === PATTERN_HANDLER_EVENT) return 'event';
  if (kind === PATTERN_HANDLER_MESSAGE) return 'message';
  return undefined;
}

/** The patterns of `method`'s `@EventPattern` / `@MessagePattern` (none for other methods). */
export function handlerPatterns(method: object): unknown[] {
  return [(Reflect.getMetadata(PATTERN_METADATA, method) as unknown) ?? []].flat();
}

/** The filters `@UseFilters()` bound to `method`, in the order written to its metadata. */
export function methodExceptionFilters(method: object): readonly unknown[] {
  return (Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, method) as unknown[] | undefined) ?? [];
}

/**
 * Adds `extras` to the pattern extras of `method` (merged with those of `@EventPattern(p, extras)`,
 * whichever decorator runs first): Nest gives them to the transport with the handler
 * (`handler.extras`), which is how `OutboxKafkaServer` knows a handler is idempotent.
 */
export function addPatternExtras(method: object, extras: Record<string, unknown>): void {
  const current = Reflect.getMetadata(PATTERN_EXTRAS_METADATA, method) as object | undefined;
  Reflect.defineMetadata(PATTERN_EXTRAS_METADATA, { ...current, ...extras }, method);
}
