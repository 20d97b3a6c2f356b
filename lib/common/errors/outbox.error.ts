/**
 * Base class of every error the library throws. `code` is stable and machine-readable;
 * `context` carries the values that explain the failure (never credentials).
 */
export class OutboxError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly context: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}
