export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Said in the error when the deadline passes. */
  message?: string;
}

/**
 * Polls `probe` until it returns a value other than undefined/false, or fails at the
 * deadline with the last value seen, so a timeout says what was observed.
 */
export async function waitUntil<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 30_000, intervalMs = 100, message = 'condition' }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${message}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
