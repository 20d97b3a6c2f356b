/** Removes credentials from connection strings in `text` (`mongodb://user:secret@host` -> `mongodb://***@host`). */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^@/\s]+@/gi, '$1***@');
}
