import { fusionDefinitionSchema, type FusionInput, type FusionRunRequest, type FusionRuntime } from '../extensions/fusion.js';
import type { ChatMessage } from '../extensions/models.js';
import { abortedSignal, conformanceRule, rejectionOf, type ConformanceRule } from './conformance.js';
import { scriptedModel, type ScriptedAnswer } from './fake-turn.js';

const SUITE = 'fusionRuntime';

const definition = fusionDefinitionSchema.parse({
  instructions: 'Read the invoice and report who sent it. MARK-INSTRUCTIONS',
  input_slots: [
    { name: 'note', kind: 'text' },
    { name: 'invoice', kind: 'file', accepted_content_types: ['text/plain'] },
  ],
  output_slots: [
    { name: 'summary', kind: 'text' },
    {
      name: 'fields',
      kind: 'structured_json',
      structured_output_schema: { type: 'object', required: ['name', 'total'], properties: { name: { type: 'string' }, total: { type: 'number' } } },
      output_instruction_fragment: 'MARK-FRAGMENT',
    },
  ],
});

const answer = { summary: 'An invoice from Acme', fields: { name: 'Acme', total: 12.5 } };

const inputs = (): FusionInput[] => [
  { slot: 'note', kind: 'text', text: 'MARK-TEXT-INPUT' },
  {
    slot: 'invoice',
    kind: 'file',
    input_id: '00000000-0000-4000-8000-000000000001',
    filename: 'invoice.txt',
    content_type: 'text/plain',
    size_bytes: 21,
    bytes: async () => new TextEncoder().encode('MARK-FILE-TEXT Acme 12.5'),
    text: async () => 'MARK-FILE-TEXT Acme 12.5',
  },
];

const json = (value: unknown): ScriptedAnswer => {
  const text = JSON.stringify(value);
  return { tokens: [text.slice(0, 10), text.slice(10)] };
};

const sent = (calls: { messages: ChatMessage[] }[]) => calls.flatMap((c) => c.messages.map((m) => m.content)).join('\n');

/**
 * The rules every {@link FusionRuntime} keeps. The suite's model answers, to every call, the JSON object
 * `fusionOutputSchema(definition)` describes (one property per output slot): runtimes ask for that object.
 * @public
 */
export function fusionRuntimeConformance(runtime: FusionRuntime): ConformanceRule[] {
  const run = (script: ScriptedAnswer[], request: Partial<FusionRunRequest> = {}, signal = new AbortController().signal) => {
    const model = scriptedModel(script.length ? [...script, ...script, ...script] : script);
    return { model, result: runtime.execute({ definition, inputs: inputs(), ...request }, { model, signal }) };
  };
  return [
    conformanceRule(SUITE, 'fills every output slot once, in definition order, with the slot kind', async (fail) => {
      const { result } = run([json(answer)]);
      const items = (await result).output_item_list;
      const got = items.map((i) => `${i.slot}:${i.kind}`).join(', ');
      if (got !== 'summary:text, fields:structured_json') fail(`output_item_list was [${got}]`);
    }),
    conformanceRule(SUITE, 'a text output is the string the model gave; a structured_json output is the JSON it gave, parsed', async (fail) => {
      const { result } = run([json(answer)]);
      const [summary, fields] = (await result).output_item_list;
      if (summary?.json_value !== answer.summary) fail(`the text output was ${JSON.stringify(summary?.json_value)}`);
      if (JSON.stringify(fields?.json_value) !== JSON.stringify(answer.fields)) fail(`the structured output was ${JSON.stringify(fields?.json_value)}`);
    }),
    conformanceRule(SUITE, 'the instructions, the output instruction fragments, the text inputs and the text of file inputs reach the model', async (fail) => {
      const { model, result } = run([json(answer)]);
      await result;
      const prompt = sent(model.calls);
      for (const mark of ['MARK-INSTRUCTIONS', 'MARK-FRAGMENT', 'MARK-TEXT-INPUT', 'MARK-FILE-TEXT'])
        if (!prompt.includes(mark)) fail(`the model never saw ${mark}`);
    }),
    conformanceRule(SUITE, 'on a repair attempt, the errors the host found reach the model', async (fail) => {
      const repair = { output_item_list: [], errors: ['/fields/total: MARK-REPAIR-ERROR must be number'] };
      const { model, result } = run([json(answer)], { repair });
      await result;
      if (!sent(model.calls).includes('MARK-REPAIR-ERROR')) fail('the repair errors were not sent to the model');
    }),
    conformanceRule(SUITE, 'reports the messages it sent and the raw text the model answered', async (fail) => {
      const { model, result } = run([json(answer)]);
      const done = await result;
      if (!done.prompt_messages.length) fail('prompt_messages was empty');
      const last = model.calls.at(-1)!.messages;
      if (JSON.stringify(done.prompt_messages) !== JSON.stringify(last)) fail('prompt_messages are not the messages of the last model call');
      if (!done.model_raw_response.includes('Acme')) fail(`model_raw_response was ${JSON.stringify(done.model_raw_response)}`);
    }),
    conformanceRule(SUITE, 'an answer that is not JSON is returned as it came, one item per slot, not thrown', async (fail) => {
      const { result } = run([{ tokens: ['no json ', 'here'] }]);
      const items = (await result).output_item_list;
      if (items.length !== 2) fail(`${items.length} items for two slots`);
      const fields = items.find((i) => i.slot === 'fields');
      if (typeof fields?.json_value !== 'string') fail(`the structured output was ${JSON.stringify(fields?.json_value)}, not the raw text`);
    }),
    conformanceRule(SUITE, 'a model failure rejects the run', async (fail) => {
      const { result } = run([{ error: new Error('model down') }]);
      if (!(await rejectionOf(result))) fail('it resolved although the model failed');
    }),
    conformanceRule(SUITE, 'an aborted signal rejects the run', async (fail) => {
      const { result } = run([json(answer)], {}, abortedSignal());
      if (!(await rejectionOf(result))) fail('it resolved although the signal was aborted');
    }),
  ];
}
