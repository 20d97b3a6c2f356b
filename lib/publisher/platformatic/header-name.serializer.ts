import type { Serializer } from '@platformatic/kafka';

/** Names kept at most: the relay's are a handful; an application's own headers add a few. */
const MAX_NAMES = 256;

/**
 * `serializer` for header names, remembering what it made: every message carries the same
 * CloudEvents names, so each is encoded once rather than once per message (the same bytes; the
 * producer only copies them into its request). Past `MAX_NAMES` distinct names, the others are
 * encoded every time.
 */
export function rememberingHeaderNames(serializer: Serializer<string>): Serializer<string> {
  const encoded = new Map<string, Buffer | undefined>();
  return (name) => {
    if (typeof name !== 'string') return serializer(name);
    let bytes = encoded.get(name);
    if (bytes === undefined) {
      bytes = serializer(name);
      if (encoded.size < MAX_NAMES) encoded.set(name, bytes);
    }
    return bytes;
  };
}
