import type { EtlPlan, EtlPlanInput, EtlRuntime, EtlTargetColumn } from '../extensions/etl.js';
import { abortedSignal, conformanceRule, rejectionOf, type ConformanceRule } from './conformance.js';
import { scriptedModel } from './fake-turn.js';

const SUITE = 'etlRuntime';

const column = (name: string, type: EtlTargetColumn['type'], required: boolean): EtlTargetColumn => ({
  name,
  type,
  required,
  description: '',
  allowed_values: [],
  format: null,
});

const TARGET = [column('name', 'string', true), column('email', 'string', true), column('signup_date', 'date', false), column('age', 'integer', false)];
const INPUT: EtlPlanInput = {
  source_columns: ['Full Name', 'E-mail', 'Signup (dd/mm/yyyy)', 'Age', 'Notes'],
  sample_rows: [
    ['Ada Lovelace', 'ada@example.com', '10/12/2025', '36', 'first'],
    ['Grace Hopper', 'grace@example.com', '25/01/2026', '85', ''],
  ],
  target: TARGET,
  instructions: null,
};
const EXPECTED: Record<string, string | null> = { name: 'Full Name', email: 'E-mail', signup_date: 'Signup (dd/mm/yyyy)', age: 'Age' };
const PLAN: EtlPlan = {
  mappings: [
    { target: 'name', source: 'Full Name', conversion: null, reason: '' },
    { target: 'email', source: 'E-mail', conversion: null, reason: '' },
    { target: 'signup_date', source: 'Signup (dd/mm/yyyy)', conversion: 'dd/mm/yyyy', reason: '' },
    { target: 'age', source: 'Age', conversion: null, reason: '' },
  ],
  unmapped_source_columns: ['Notes'],
  planned_by: 'model',
};
// What a model answers when a runtime asks it for the plan: the same mappings as JSON.
const modelAnswer = JSON.stringify({ mappings: PLAN.mappings.map((m) => ({ ...m, reason: 'same meaning' })) });

/**
 * The rules every {@link EtlRuntime} keeps, on a small customer export (`Full Name`, `E-mail`, `Signup (dd/mm/yyyy)`,
 * `Age`, `Notes`) and a target schema (`name`, `email`, `signup_date` date, `age` integer). Runtimes that plan with
 * a model get one that answers `{mappings: [...]}` as JSON.
 * @public
 */
export function etlRuntimeConformance(runtime: EtlRuntime): ConformanceRule[] {
  const plan = (signal = new AbortController().signal) => {
    const model = scriptedModel([{ tokens: [modelAnswer.slice(0, 20), modelAnswer.slice(20)] }]);
    return runtime.plan(INPUT, { model, signal });
  };
  const convert = (row: string[]) => runtime.converter(PLAN, INPUT)(row);
  return [
    conformanceRule(SUITE, 'the plan maps every target column once, in target order, to a header column or none', async (fail) => {
      const got = await plan();
      const targets = got.mappings.map((m) => m.target).join(', ');
      if (targets !== TARGET.map((c) => c.name).join(', ')) fail(`the mappings were for [${targets}]`);
      for (const m of got.mappings)
        if (m.source !== null && !INPUT.source_columns.includes(m.source)) fail(`"${m.target}" maps from "${m.source}", not a header column`);
    }),
    conformanceRule(SUITE, 'the plan matches the columns a person would, and reads the dates by the header’s layout', async (fail) => {
      const got = await plan();
      for (const m of got.mappings) if (m.source !== EXPECTED[m.target]) fail(`"${m.target}" maps from ${JSON.stringify(m.source)}`);
      const date = got.mappings.find((m) => m.target === 'signup_date');
      if (date?.conversion !== 'dd/mm/yyyy') fail(`signup_date is read as ${JSON.stringify(date?.conversion)}`);
    }),
    conformanceRule(SUITE, 'the plan lists the source columns no mapping uses', async (fail) => {
      const got = await plan();
      if (got.unmapped_source_columns.join() !== 'Notes') fail(`unmapped: [${got.unmapped_source_columns.join(', ')}]`);
    }),
    conformanceRule(SUITE, 'an aborted signal rejects the plan', async (fail) => {
      if (!(await rejectionOf(plan(abortedSignal())))) fail('it planned although the signal was aborted');
    }),
    conformanceRule(SUITE, 'a row converts to one value per target column, in order, numbers as numbers and dates as yyyy-mm-dd', async (fail) => {
      const row = convert(['Ada Lovelace', 'ada@example.com', '10/12/2025', '36', 'first']);
      const want = JSON.stringify(['Ada Lovelace', 'ada@example.com', '2025-12-10', 36]);
      if (JSON.stringify(row.values) !== want) fail(`the values were ${JSON.stringify(row.values)}, not ${want}`);
      if (row.rejected) fail('the row was rejected');
    }),
    conformanceRule(SUITE, 'a cell that does not fit its type is emptied and reported, not thrown', async (fail) => {
      const row = convert(['Ada Lovelace', 'ada@example.com', '31/02/2025', 'old', '']);
      if (row.values[2] !== null || row.values[3] !== null) fail(`the values were ${JSON.stringify(row.values)}`);
      const reported = row.issues.filter((i) => i.kind === 'rejected').map((i) => i.column);
      if (reported.join() !== 'signup_date,age') fail(`the rejected cells reported were [${reported.join(', ')}]`);
      if (row.rejected) fail('the row was rejected although only optional columns failed');
    }),
    conformanceRule(SUITE, 'a required column without a value rejects the row', async (fail) => {
      const row = convert(['  ', 'ada@example.com', '', '', '']);
      if (!row.rejected) fail('the row was kept');
      if (!row.issues.some((i) => i.column === 'name' && i.kind === 'rejected')) fail('the missing name was not reported');
    }),
    conformanceRule(SUITE, 'conversion is deterministic: the same row gives the same result', async (fail) => {
      const row = ['Grace Hopper', 'grace@example.com', '25/01/2026', '85', ''];
      if (JSON.stringify(convert(row)) !== JSON.stringify(convert(row))) fail('two conversions of one row differ');
    }),
  ];
}
