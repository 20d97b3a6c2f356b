const MAX_LENGTH = 2000;

/** One line describing an error for logs and stored error histories (never the stack). */
export function describeError(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = `${error.name}: ${error.message}`;
  else if (typeof error === 'string') text = error;
  else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      text = String(error);
    }
  }
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH)}...` : text;
}

/** `error` itself when it is an Error, else an Error carrying its text. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
