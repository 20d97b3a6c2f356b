/** The default consumer name: `ClassName.methodName`. Stable across restarts and instances. */
export function defaultConsumerName(className: string, methodName: string): string {
  return `${className}.${methodName}`;
}

export const MAX_CONSUMER_NAME_LENGTH = 200;

/** Why `name` cannot be a consumer name, or undefined when it can. */
export function consumerNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `must be a string, got ${typeof name}`;
  if (name.trim().length === 0) return 'must not be empty';
  if (name.length > MAX_CONSUMER_NAME_LENGTH) {
    return `must be at most ${MAX_CONSUMER_NAME_LENGTH} characters`;
  }
  if (hasControlCharacters(name)) return 'must not contain control characters';
  return undefined;
}

/** True when `text` has a C0 control character or DEL. */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
