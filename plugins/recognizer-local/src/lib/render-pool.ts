import { BadRequestError } from '@agent-host/sdk';
import { Piscina } from 'piscina';
import type { RenderOutcome, RenderTask } from './render-worker.js';

export interface RenderPoolOptions {
  /** Renders running at once; more wait their turn. */
  workers: number;
  /** Heap ceiling of each worker. */
  memoryMb: number;
  timeoutMs: number;
}

/**
 * Renditions and previews run in worker threads (piscina) under a heap ceiling and a deadline: a file that would
 * exhaust memory or never finish fails its run with that reason, the worker is replaced, and the host serves on.
 */
export class RenderPool {
  private readonly pool: Piscina<RenderTask, RenderOutcome>;

  constructor(private readonly options: RenderPoolOptions) {
    this.pool = new Piscina({
      filename: new URL('./render-worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: options.workers,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
    });
  }

  async render(task: RenderTask, filename: string, signal: AbortSignal): Promise<Exclude<RenderOutcome, { refused: string }>> {
    signal.throwIfAborted();
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    let outcome: RenderOutcome;
    try {
      outcome = await this.pool.run(task, { signal: AbortSignal.any([signal, deadline]) });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (deadline.aborted) throw refused(filename, `rendering did not finish within ${this.options.timeoutMs / 1000} s (render_timeout_seconds)`);
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY')
        throw refused(filename, `rendering needed more than ${this.options.memoryMb} MB of memory (render_memory_mb)`);
      throw error;
    }
    if ('refused' in outcome) throw refused(filename, outcome.refused);
    return outcome;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

const refused = (filename: string, why: string) => new BadRequestError(`${filename}: ${why}`, { code: 'DOCUMENT_UNREADABLE' });
