import type { Trace } from '@agent-host/sdk';
import type { TimedSpan } from '../../observability/turn-trace-exporter.js';

/**
 * The spans of one turn, timed from its start: the runtime's and the tool pipeline's (through the `Trace` handle) and
 * the pipeline's own stages (`turn.<stage>`), which show where a turn spent its time in the stored context and in an
 * exported trace. A span is listed when it ends, so an enclosing stage follows the spans within it.
 */
export class TurnTrace implements Trace {
  readonly spans: TimedSpan[] = [];

  constructor(
    readonly traceId: string,
    readonly started: number,
  ) {}

  async span<T>(name: string, run: (attributes: Record<string, unknown>) => Promise<T>): Promise<T> {
    const end = this.begin(name);
    const attributes: Record<string, unknown> = {};
    try {
      return await run(attributes);
    } finally {
      end(attributes);
    }
  }

  /** A span that ends when the returned function is called: for a stage that streams. */
  begin(name: string): (attributes?: Record<string, unknown>) => void {
    const t0 = Date.now();
    return (attributes = {}) => {
      this.spans.push({ name, start_ms: t0 - this.started, ms: Date.now() - t0, attributes });
    };
  }

  /** Runs one named stage of the pipeline within its span. */
  stage<T>(name: TurnStage, run: (attributes: Record<string, unknown>) => Promise<T>): Promise<T> {
    return this.span(`turn.${name}`, run);
  }
}

/** The pipeline's stages, in order (spec 4.2): each has a module of its own under `chat/turn/`. */
export const TURN_STAGES = ['session', 'fixed-response', 'limits', 'context', 'quick-match', 'orchestrator'] as const;
export type TurnStage = (typeof TURN_STAGES)[number];
