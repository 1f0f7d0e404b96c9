import type { ChatMessage, EtlConvertedRow, EtlPlan, EtlPlanContext, EtlPlanInput, EtlRuntime } from '@agent-host/sdk';
import { rowConverter } from './convert.js';
import { deterministicPlan, modelPlan, PLAN_SCHEMA } from './plan.js';

/**
 * `etl_mapper`: the column plan from the agent's model (asked with the header, the sample and the target schema, as
 * structured output), or, without a model or when the answer is not a usable plan, from names and value types; then
 * a deterministic conversion of each row by the target's types.
 */
export class MapperRuntime implements EtlRuntime {
  constructor(private readonly useModel: boolean) {}

  async plan(input: EtlPlanInput, context: EtlPlanContext): Promise<EtlPlan> {
    context.signal.throwIfAborted();
    if (!this.useModel) return deterministicPlan(input);
    const messages: ChatMessage[] = [
      {
        role: 'system',
        content: [
          'Map the columns of a CSV file onto a target schema. For each target column name the source column its values come from',
          '(exactly as in the header, or null when none fits) and how to read them: a date layout (dd/mm/yyyy, mm/dd/yyyy, yyyy-mm-dd,',
          'dd.mm.yyyy, dd-mm-yyyy), decimal_comma for numbers written 1.234,50, or null. Use each source column at most once.',
          input.instructions ? `Instructions from the user: ${input.instructions}` : '',
        ]
          .filter(Boolean)
          .join('\n'),
      },
      {
        role: 'user',
        content: JSON.stringify({ target_schema: input.target, source_columns: input.source_columns, sample_rows: input.sample_rows }),
      },
    ];
    let answer = '';
    for await (const chunk of context.model.stream(messages, { signal: context.signal, responseSchema: PLAN_SCHEMA })) {
      if (chunk.type === 'token') answer += chunk.content;
    }
    const plan = modelPlan(answer, input);
    return typeof plan === 'string' ? deterministicPlan(input, `the model gave no plan (${plan}); matched by names and value types`) : plan;
  }

  converter(plan: EtlPlan, input: Pick<EtlPlanInput, 'source_columns' | 'target'>): (row: string[]) => EtlConvertedRow {
    return rowConverter(plan.mappings, input.source_columns, input.target);
  }
}
