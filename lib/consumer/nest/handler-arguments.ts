import type { RpcParameters } from './nest-internals';

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
