/**
 * The cluster time a MongoDB resume token points at, when it can be read from the token: a
 * `_data` string in the KeyString format of MongoDB 4.2 and later starts with the type byte of a
 * Timestamp (`0x82`), then the timestamp's seconds and increment (big-endian). Undefined for any
 * other shape (older servers, other implementations); the caller then uses the time the
 * checkpoint was saved.
 */
export function resumeTokenTime(token: unknown): Date | undefined {
  const data = (token as { _data?: unknown } | null | undefined)?._data;
  if (typeof data !== 'string' || !/^82[0-9a-fA-F]{16}/.test(data)) return undefined;
  const seconds = parseInt(data.slice(2, 10), 16);
  return seconds > 0 ? new Date(seconds * 1000) : undefined;
}
