/**
 * One rule of a conformance suite. `check` resolves when the implementation keeps the rule and rejects with a
 * {@link ConformanceError} naming the suite and the rule when it does not. Suites are plain arrays of rules, so any
 * test runner can run them: `for (const r of embedderConformance(e)) t.test(r.rule, () => r.check())`.
 * @public
 */
export interface ConformanceRule {
  /** The extension point, for example `embedder`. */
  readonly suite: string;
  /** What every implementation must do, as a sentence. */
  readonly rule: string;
  check(): Promise<void>;
}

/**
 * A broken conformance rule: the message says which suite, which rule, and what the implementation did instead.
 * @public
 */
export class ConformanceError extends Error {
  readonly suite: string;
  readonly rule: string;
  constructor(suite: string, rule: string, detail: string, options?: { cause?: unknown }) {
    super(`${suite} conformance, rule "${rule}": ${detail}`, options);
    this.name = 'ConformanceError';
    this.suite = suite;
    this.rule = rule;
  }
}

/** What a rule's body may call to report how the implementation broke the rule. */
export type Fail = (detail: string) => never;

/** A rule whose body throws through `fail`; any other error thrown by the implementation breaks the rule too. */
export function conformanceRule(suite: string, rule: string, body: (fail: Fail) => Promise<void>): ConformanceRule {
  const fail: Fail = (detail) => {
    throw new ConformanceError(suite, rule, detail);
  };
  return {
    suite,
    rule,
    async check() {
      try {
        await body(fail);
      } catch (error) {
        if (error instanceof ConformanceError) throw error;
        throw new ConformanceError(suite, rule, `it threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`, { cause: error });
      }
    },
  };
}

/** Resolves with what `promise` rejected with, or undefined when it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error ?? new Error('rejected with nothing');
  }
}

/** An AbortSignal that is already aborted. */
export function abortedSignal(): AbortSignal {
  const controller = new AbortController();
  controller.abort(new Error('aborted by the conformance suite'));
  return controller.signal;
}
