import {
  EVALUATION_JUDGE_SCHEMA,
  FUSION_OUTPUT_SCHEMA_NAME,
  GROUNDED_ANSWER_SCHEMA,
  type ChatCallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatModel,
  type ChatModelSpec,
  type ChatStreamChunk,
  type ModelProvider,
} from '@agent-host/sdk';

const WORD = /[\p{L}\p{N}]+/gu;
// Function words carry no topic, so sharing them must not make a passage relevant.
const STOPWORDS = new Set(
  'the and are was were for you your with that this from have has had not but can will what when where which who why how all any our out its into than then them they their there these those about would could should been being does did answer passages relevant'.split(
    ' ',
  ),
);
const words = (text: string) => new Set((text.toLowerCase().match(WORD) ?? []).filter((w) => w.length > 2 && !STOPWORDS.has(w)));

/** Splits context into passages: blank-line blocks, else lines. */
function passages(text: string): string[] {
  return text
    .split(/\n\s*\n|\n(?=[-*\d[])/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

const questionOf = (messages: ChatMessage[]) => [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';

/** The passages sharing the most words with the question (at most three, in context order), with their counts. */
function bestPassages<P extends { text: string }>(question: string, candidates: P[]): (P & { score: number })[] {
  const asked = words(question);
  return candidates
    .map((p, index) => ({ ...p, index, score: [...words(p.text)].filter((w) => asked.has(w)).length }))
    .filter((p) => p.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, 3)
    .sort((a, b) => a.index - b.index);
}

/**
 * The deterministic answer: the context passages sharing the most words with
 * the question (at most three, in context order), or a plain statement that
 * no language model is configured.
 */
export function offlineAnswer(messages: ChatMessage[]): string {
  const question = questionOf(messages);
  const candidates = messages.filter((m) => m.role === 'system' || m.role === 'tool').flatMap((m) => passages(m.content).map((text) => ({ text })));
  const best = bestPassages(question, candidates);
  if (best.length === 0) {
    return `[offline model] No language model is configured, so this reply is deterministic. I found nothing in my context that matches: "${question.trim()}"`;
  }
  return best.map((p) => p.text).join('\n\n');
}

// A piece of evidence as the SDK's grounding handle lists it: `[E1] (source: ...) text`.
const EVIDENCE = /^\[(E\d+)\] \([^)]*\) ?/;

/**
 * The deterministic grounded answer (asked with the SDK's `GROUNDED_ANSWER_SCHEMA`): the evidence passages that
 * {@link offlineAnswer} would pick, cited by their ids; none is an ungrounded, empty answer. Confidence is the share
 * of the question's words the best passage holds.
 */
export function offlineGroundedAnswer(messages: ChatMessage[]): string {
  const question = questionOf(messages);
  const evidence = messages
    .filter((m) => m.role === 'system')
    .flatMap((m) => passages(m.content))
    .flatMap((text) => {
      const id = EVIDENCE.exec(text)?.[1];
      return id ? [{ id, text: text.replace(EVIDENCE, '') }] : [];
    });
  const best = bestPassages(question, evidence);
  if (best.length === 0) return JSON.stringify({ grounded: false, confidence: 0, citations: [], answer: '' });
  const confidence = Math.round((Math.max(...best.map((p) => p.score)) / Math.max(words(question).size, 1)) * 100) / 100;
  return JSON.stringify({ grounded: true, confidence, citations: best.map((p) => p.id), answer: best.map((p) => p.text).join('\n\n') });
}

/**
 * The deterministic judge (asked with the SDK's `EVALUATION_JUDGE_SCHEMA`; its user message is the item as JSON): the
 * score is the share of an accepted answer's words the answer holds, for the accepted answer it covers best. It
 * checks words, not meaning: real judging needs a real model.
 */
export function offlineJudgement(messages: ChatMessage[]): string {
  let input: { expected_answers?: unknown; answer?: unknown } = {};
  try {
    input = JSON.parse(questionOf(messages)) as typeof input;
  } catch {
    // judged as an empty item below
  }
  const expected = Array.isArray(input.expected_answers) ? input.expected_answers.filter((a): a is string => typeof a === 'string') : [];
  // Every word counts here, short ones and numbers too: "30 days" is not answered by "days".
  const terms = (text: string) => new Set((text.toLowerCase().match(WORD) ?? []).filter((w) => !STOPWORDS.has(w)));
  const answered = terms(typeof input.answer === 'string' ? input.answer : '');
  const coverage = expected.map((text) => {
    const wanted = [...terms(text)];
    const missing = wanted.filter((w) => !answered.has(w));
    return { text, missing, score: wanted.length ? (wanted.length - missing.length) / wanted.length : 0 };
  });
  const best = coverage.sort((a, b) => b.score - a.score)[0];
  const score = Math.round((best?.score ?? 0) * 100) / 100;
  const right = score === 1;
  return JSON.stringify({
    score,
    reason: best
      ? `[offline judge] The answer holds ${Math.round(score * 100)}% of the words of the accepted answer "${best.text}".`
      : '[offline judge] The item has no accepted answer.',
    issues: best && !right ? [`missing: ${best.missing.join(', ')}`] : [],
    improvement_suggestions: best && !right ? [`State what the accepted answer says: ${best.text}`] : [],
    suggested_better_answer: best && !right ? best.text : '',
    confidence: 0.5,
  });
}

type Schema = { type?: unknown; properties?: Record<string, Schema>; enum?: unknown[] };

/**
 * The deterministic answer to a Fusion run's structured output (`FUSION_OUTPUT_SCHEMA_NAME`): every property of the schema is read from
 * a `name: value` line of the user's messages (`Total = 12.50` fills `total`), converted to the property's type; a
 * string property with no such line gets the first line of the input, any other property null. It copies labelled
 * values, no more: reading free text needs a real model.
 */
export function offlineFilledSchema(messages: ChatMessage[], schema: Schema): string {
  const text = messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n');
  const firstLine =
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l && !l.startsWith('## ')) ?? '';
  const labelled = (name: string) => {
    const label = name.replace(/_/g, '[ _-]?');
    return new RegExp(`^\\s*[-*]?\\s*${label}\\s*[:=]\\s*(.+?)\\s*$`, 'imu').exec(text)?.[1];
  };
  const fill = (name: string, property: Schema): unknown => {
    if (property.type === 'object' && property.properties) return Object.fromEntries(Object.entries(property.properties).map(([k, p]) => [k, fill(k, p)]));
    const value = labelled(name);
    const types = Array.isArray(property.type) ? property.type : [property.type];
    if (types.includes('number') || types.includes('integer')) {
      const number = value === undefined ? NaN : Number(value.replace(/[^\d.-]/g, ''));
      return Number.isNaN(number) ? null : types.includes('integer') ? Math.round(number) : number;
    }
    if (types.includes('boolean')) return value === undefined ? null : /^(true|yes|1)$/i.test(value);
    if (property.enum) return property.enum.find((e) => String(e).toLowerCase() === value?.toLowerCase()) ?? null;
    return value ?? firstLine;
  };
  return JSON.stringify(fill('', schema));
}

/** The offline model's answer to a call: a grounded answer, a judgement, a filled schema, or passages, by the structured output asked. */
function offlineReply(messages: ChatMessage[], options?: ChatCallOptions): string {
  const schema = options?.responseSchema;
  if (schema?.name === GROUNDED_ANSWER_SCHEMA.name) return offlineGroundedAnswer(messages);
  if (schema?.name === EVALUATION_JUDGE_SCHEMA.name) return offlineJudgement(messages);
  if (schema?.name === FUSION_OUTPUT_SCHEMA_NAME) return offlineFilledSchema(messages, schema.schema as Schema);
  return offlineAnswer(messages);
}

class OfflineChatModel implements ChatModel {
  readonly provider = 'offline';
  constructor(readonly modelName: string) {}

  async *stream(messages: ChatMessage[], options?: ChatCallOptions): AsyncIterable<ChatStreamChunk> {
    const parts = offlineReply(messages, options).split(/(?<= )/);
    for (const content of parts) {
      options?.signal?.throwIfAborted();
      yield { type: 'token', content };
    }
  }

  async invoke(messages: ChatMessage[], options?: ChatCallOptions): Promise<ChatCompletion> {
    options?.signal?.throwIfAborted();
    return { content: offlineReply(messages, options), tool_calls: [] };
  }
}

/** `model_provider = "offline"`: deterministic, calls no model, reports no usage (core estimates it). */
export class OfflineModelProvider implements ModelProvider {
  readonly displayName = 'Offline (deterministic, no language model)';
  readonly offline = true;

  createChatModel(spec: ChatModelSpec): ChatModel {
    return new OfflineChatModel(spec.model_name);
  }
}
