/**
 * Which outcomes already reached the person: a foreground run marks the stdout buffer it
 * returns, and the printers skip a value whose bytes were shown as they were produced (the
 * outcome keeps them for `.out`). Keyed by the buffer, which the evaluator stores as is.
 *
 * @module
 */

const STREAMED = new WeakSet<Uint8Array>();

/** Record that `stdout` was shown live. */
export function markStreamed(stdout: Uint8Array): void {
  STREAMED.add(stdout);
}

/** True when `stdout` was shown live (do not print it again). */
export function wasStreamed(stdout: Uint8Array): boolean {
  return STREAMED.has(stdout);
}
