import { EVALUATION_JUDGE_SCHEMA, type ChatModel, type JudgeInput } from '@agent-host/sdk';
import { askStructured } from '../models/structured-output.js';

/** The built-in judge prompt, used when the agent's `judge_prompt` is empty (its version is `default`, rubric `v1`). */
export const DEFAULT_JUDGE_PROMPT = [
  "You grade an assistant's answer to a question against the accepted answers.",
  'Score 1 when the answer states what an accepted answer states (other words are fine), 0.5 when it is partly right or',
  'incomplete, 0 when it is wrong, contradicts the accepted answers, or does not answer. Extra correct detail is fine;',
  'invented facts are issues. Reply with the JSON object asked for: score, reason (one sentence), issues,',
  'improvement_suggestions, suggested_better_answer (empty when the answer is right) and confidence (0 to 1).',
].join(' ');
export const RUBRIC_VERSION = 'v1';

/** The judge's verdict on one item (spec 2.9 `judge_score`); `raw_response_text` is the model's reply as it came. */
export interface JudgeScore {
  score: number | null;
  reason: string | null;
  issues: string[];
  improvement_suggestions: string[];
  suggested_better_answer: string | null;
  confidence: number | null;
  rubric_version: string;
  raw_response_text: string;
}

/** How a judge call ended: `scored`, or `invalid_json` when its reply held no usable verdict (kept raw). */
export type JudgeStatus = 'scored' | 'invalid_json';

const strings = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const unit = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : null);

/**
 * Asks the judge model for its verdict as structured output (then, from a model that refuses it, as JSON text). A
 * reply that is not a JSON object with a numeric `score` is kept in `raw_response_text` and marked `invalid_json`; a
 * judge that never answered (failed, timed out) throws, and the item fails.
 */
export async function judgeAnswer(model: ChatModel, prompt: string, input: JudgeInput, signal: AbortSignal) {
  const messages = [
    { role: 'system' as const, content: prompt },
    { role: 'user' as const, content: JSON.stringify(input) },
  ];
  const answer = await askStructured(model, messages, EVALUATION_JUDGE_SCHEMA, signal);
  if (answer.text === undefined) throw new Error(answer.error ?? 'the judge did not answer');
  const value = answer.value;
  const score = unit(value?.score);
  const status: JudgeStatus = value && score !== null ? 'scored' : 'invalid_json';
  const judged: JudgeScore = {
    score,
    reason: typeof value?.reason === 'string' ? value.reason : null,
    issues: strings(value?.issues),
    improvement_suggestions: strings(value?.improvement_suggestions),
    suggested_better_answer: typeof value?.suggested_better_answer === 'string' ? value.suggested_better_answer : null,
    confidence: unit(value?.confidence),
    rubric_version: RUBRIC_VERSION,
    raw_response_text: answer.text,
  };
  return { status, score: judged };
}
