import { JSONParser } from '@streamparser/json';
import type { ChatCallOptions, ChatMessage, ChatModel } from '../extensions/models.js';
import type { TurnEvent } from '../extensions/orchestrators.js';

/** The fields of a structured answer read so far; `answer` grows while the model writes it. */
export interface AnswerFields {
  grounded?: unknown;
  confidence?: unknown;
  citations?: unknown;
  answer?: string;
}

/** What one structured call gave. */
export interface AttemptOutcome {
  /** Every character the model sent (up to where reading stopped). */
  raw: string;
  fields: AnswerFields;
  /** The answer text already streamed as tokens. */
  streamed: string;
  /** `incomplete`: the object had not closed when the model stopped; `invalid`: the text is not one JSON object. */
  json: 'complete' | 'incomplete' | 'invalid';
}

/** Whether to stream the answer once its leading fields are known, stop reading, or read it whole first. */
export type Judgement = 'stream' | 'stop' | 'wait';

// Text a model may put before the object: whitespace and a Markdown fence (```json).
const PREAMBLE = /^\s*(`{1,3}(j(s(o(n)?)?)?)?\s*)?$/i;

/**
 * One structured answer, read as the model streams it. The leading fields (`grounded`, `confidence`, `citations`)
 * are judged as soon as the `answer` field begins: `stream` sends the answer's text as `token` events while it is
 * written, so the time to first token grows by those fields only; `stop` ends the call; `wait` (leading fields
 * missing, the model wrote them after the answer) reads the whole answer before anything is shown. With `keepRaw`,
 * text that is not JSON is read to its end (for a plain-text fallback); otherwise reading stops at once.
 */
export async function* streamStructured(
  model: ChatModel,
  messages: ChatMessage[],
  options: ChatCallOptions,
  judge: (fields: AnswerFields) => Judgement,
  keepRaw: boolean,
): AsyncGenerator<TurnEvent, AttemptOutcome, void> {
  const fields: AnswerFields = {};
  let answerStarted = false;
  let json: AttemptOutcome['json'] = 'incomplete';
  const parser = new JSONParser({ paths: ['$.*'], emitPartialTokens: true, emitPartialValues: true });
  parser.onValue = ({ value, key, stack }) => {
    if (stack.length !== 1 || typeof key !== 'string') return;
    if (key === 'answer') {
      answerStarted = true;
      if (typeof value === 'string') fields.answer = value;
    } else if (key === 'grounded' || key === 'confidence' || key === 'citations') fields[key] = value;
  };
  parser.onError = () => (json = 'invalid');
  parser.onEnd = () => {
    if (json !== 'invalid') json = 'complete';
  };
  let raw = '';
  let fed = 0;
  let streamed = '';
  let judgement: Judgement | undefined;
  for await (const chunk of model.stream(messages, options)) {
    if (chunk.type !== 'token') continue;
    raw += chunk.content;
    if (json === 'incomplete' && !parser.isEnded) {
      if (fed === 0) {
        const start = raw.indexOf('{');
        if (start < 0 ? !PREAMBLE.test(raw) : !PREAMBLE.test(raw.slice(0, start))) json = 'invalid';
        else if (start >= 0) {
          fed = raw.length;
          feed(parser, raw.slice(start));
        }
      } else {
        fed = raw.length;
        feed(parser, chunk.content);
      }
    }
    if (json === 'invalid') {
      if (keepRaw) continue;
      break;
    }
    if (answerStarted && judgement === undefined) judgement = judge(fields);
    if (judgement === 'stop') break;
    if (judgement === 'stream' && fields.answer !== undefined && fields.answer.length > streamed.length) {
      const content = fields.answer.slice(streamed.length);
      streamed = fields.answer;
      yield { type: 'token', content };
    }
  }
  return { raw, fields, streamed, json };
}

/** Feeds the parser; text after the object (a closing fence) is not part of the answer. */
function feed(parser: JSONParser, text: string): void {
  try {
    parser.write(text);
  } catch {
    if (!parser.isEnded) parser.onError(new Error('invalid JSON'));
  }
}
