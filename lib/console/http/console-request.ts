/** The parts of an Express or Fastify request the console reads. */
export interface ConsoleRequest {
  headers: Record<string, string | string[] | undefined>;
  query?: Record<string, unknown>;
  body?: unknown;
  protocol?: string;
  user?: unknown;
  [key: symbol]: unknown;
}

/** Where the console keeps who is asking, on the request, once access is granted. */
export const CONSOLE_USER = Symbol('outbox:console_user');

export function consoleUser(request: ConsoleRequest): string {
  return String(request[CONSOLE_USER] ?? 'unknown');
}

/** One text field of a query or a form (the first, when repeated); undefined when empty. */
export function field(source: unknown, name: string): string | undefined {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.trim() !== '' ? first.trim() : undefined;
}

/** Every value of a repeated form field (checkboxes). */
export function fields(source: unknown, name: string): string[] {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((v): v is string => typeof v === 'string' && v !== '');
}
