import { MessageChannel } from 'node:worker_threads';
import { BadRequestError, type DocumentInput, type DocumentParser, type ParsedDocument } from '@agent-host/sdk';
import { Piscina } from 'piscina';
import { overLimit, type ParseLimits } from './parse-limits.js';
import type { ParseOutcome, ParseTask } from './parse-worker.js';

export interface ParserPoolOptions {
  /** Parses running at once; more wait their turn. */
  workers: number;
  /** Heap ceiling of each worker. */
  memoryMb: number;
  timeoutMs: number;
  limits: ParseLimits;
}

/**
 * Local parses run in worker threads (piscina) under a heap ceiling and a deadline: a document that would exhaust
 * memory or never finish fails with that reason, the worker is replaced, and the host's event loop serves on.
 */
export class ParserPool {
  private readonly pool: Piscina<ParseTask, ParseOutcome>;

  constructor(private readonly options: ParserPoolOptions) {
    this.pool = new Piscina({
      filename: new URL('./parse-worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: options.workers,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
    });
  }

  /** The parser registered under `contentType`, running in the pool. */
  parser(contentType: string): DocumentParser {
    return { parse: (input, options) => this.parse(contentType, input, options?.signal) };
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }

  private async parse(contentType: string, input: DocumentInput, signal?: AbortSignal): Promise<ParsedDocument> {
    signal?.throwIfAborted();
    // The deadline runs from the moment the worker starts this parse, not while it waits in the queue.
    const deadline = new AbortController();
    const { port1: startedHere, port2: started } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    startedHere.once('message', () => (timer = setTimeout(() => deadline.abort(), this.options.timeoutMs)));
    let outcome: ParseOutcome;
    try {
      outcome = await this.pool.run(
        { contentType, input, limits: this.options.limits, started },
        { signal: signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal, transferList: [started] },
      );
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.signal.aborted) throw overLimit(input.filename, `parsing did not finish within ${this.options.timeoutMs / 1000} s`, 'parse_timeout_seconds');
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw overLimit(input.filename, `parsing needed more than ${this.options.memoryMb} MB of memory`, 'parse_memory_mb');
      }
      throw error;
    } finally {
      clearTimeout(timer);
      startedHere.close();
    }
    if ('document' in outcome) return outcome.document;
    throw outcome.failure.refused ? new BadRequestError(outcome.failure.message, { code: 'DOCUMENT_UNREADABLE' }) : new Error(outcome.failure.message);
  }
}
