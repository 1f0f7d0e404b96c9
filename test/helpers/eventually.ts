/** Resolves once `check` gives a value (or a promise of one), polling every `everyMs`; rejects naming `what` after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 15_000, everyMs = 100): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, everyMs))) {
    const found = await check();
    if (found !== undefined) return found;
  }
  throw new Error(`timed out waiting for ${what}`);
}
