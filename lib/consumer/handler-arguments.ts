/** Nest's parameter types for RPC handlers (`RpcParamtype` in @nestjs/microservices). */
const RPC_PAYLOAD = 3;
const RPC_CONTEXT = 6;

/** Where the payload goes in the arguments Nest passes to the handler method. */
export interface ArgumentPlan {
  /** False when the method has no `@Payload()`/`@Ctx()`: Nest passes `(data, context)`. */
  declared: boolean;
  payload: Array<{ index: number; property?: string }>;
  contextIndex?: number;
}

type RouteArgs = Record<string, { index: number; data?: unknown }>;

/**
 * Reads the `@Payload()` / `@Ctx()` parameters from Nest's route-arguments metadata
 * (`Reflect.getMetadata(ROUTE_ARGS_METADATA, Controller, method)`; keys are `"<type>:<index>"`).
 */
export function planArguments(routeArgs: RouteArgs | undefined): ArgumentPlan {
  if (!routeArgs || Object.keys(routeArgs).length === 0) {
    return { declared: false, payload: [{ index: 0 }], contextIndex: 1 };
  }
  const plan: ArgumentPlan = { declared: true, payload: [] };
  for (const [key, meta] of Object.entries(routeArgs)) {
    const type = Number(key.split(':')[0]);
    if (type === RPC_PAYLOAD) {
      plan.payload.push({
        index: meta.index,
        ...(typeof meta.data === 'string' ? { property: meta.data } : {}),
      });
    } else if (type === RPC_CONTEXT) {
      plan.contextIndex = meta.index;
    }
  }
  return plan;
}

/** The handler's arguments with each payload parameter replaced from the decoded `payload`. */
export function substitutePayload(
  args: readonly unknown[],
  plan: ArgumentPlan,
  payload: unknown,
): unknown[] {
  const next = [...args];
  for (const { index, property } of plan.payload) {
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
