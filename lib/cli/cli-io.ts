/** Where the CLI writes, and how it asks (replaced in tests). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Asks `question` and resolves the answer line. */
  ask(question: string): Promise<string>;
}
