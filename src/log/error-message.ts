// A catch clause or a rejection handler can receive any value, not only an Error; handlers take
// `unknown` and log what they caught through errorMessage.

/** An Error's message, anything else as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
