import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { APIError, type OpenAI } from 'openai';
import type { HttpStreamResponse } from '@agent-host/sdk';

/**
 * The chunks of a streamed chat completion, read from its server-sent events as the openai SDK's `Stream` reads them
 * (`[DONE]` ends the stream; an event whose data holds `error` fails it with the SDK's `APIError`), but handed over
 * in batches, one per read of the body: the SDK's stream passes each chunk through four async iterators, about a
 * dozen promises a token, where this costs one iteration a network read.
 */
export async function* completionChunks(response: HttpStreamResponse): AsyncGenerator<OpenAI.ChatCompletionChunk[], void, void> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  const decoder = new TextDecoder();
  let done = false;
  const take = () => {
    const batch: OpenAI.ChatCompletionChunk[] = [];
    for (const event of events.splice(0)) {
      if (done || event.data.startsWith('[DONE]')) {
        done = true;
        continue;
      }
      const data = JSON.parse(event.data) as OpenAI.ChatCompletionChunk & { error?: Record<string, unknown> };
      if (data.error) throw new APIError(undefined, data.error, undefined, response.headers);
      batch.push(data);
    }
    return batch;
  };
  for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    const batch = take();
    if (batch.length > 0) yield batch;
  }
  // An event the body ended without its blank line still counts, as in the SDK.
  parser.feed(`${decoder.decode()}\n\n`);
  const last = take();
  if (last.length > 0) yield last;
}
