/** Removes credentials from connection strings in `text`: the user-info part before `@` becomes `***`. */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^@/\s]+@/gi, '$1***@');
}
