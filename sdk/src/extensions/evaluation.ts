/**
 * The structured output an evaluation judge is asked for. Its user message is one JSON object
 * `{question, expected_answers, answer}`: the item, its accepted answers, and the agent's answer to judge.
 * @beta
 */
export const EVALUATION_JUDGE_SCHEMA = Object.freeze({
  name: 'evaluation_judge',
  schema: Object.freeze({
    type: 'object',
    properties: {
      score: { type: 'number', description: '0 (wrong) to 1 (fully right)' },
      reason: { type: 'string' },
      issues: { type: 'array', items: { type: 'string' } },
      improvement_suggestions: { type: 'array', items: { type: 'string' } },
      suggested_better_answer: { type: 'string' },
      confidence: { type: 'number', description: '0 to 1' },
    },
    required: ['score', 'reason', 'issues', 'improvement_suggestions', 'suggested_better_answer', 'confidence'],
    additionalProperties: false,
  }),
});

/** What a judge is given for one item (the JSON of its user message). @beta */
export interface JudgeInput {
  question: string;
  expected_answers: string[];
  answer: string;
}
