import type { Orchestrator, TurnEvent, TurnResult } from '../extensions/orchestrators.js';
import { conformanceRule, rejectionOf, type ConformanceRule, type Fail } from './conformance.js';
import { DEFAULT_GROUNDING_TEXTS } from '../grounding/handle.js';
import type { RetrievedChunk } from '../extensions/orchestrators.js';
import { fakeAgentSnapshot, fakeGrounding, fakeScheduling, fakeTurnContext, scriptedModel, type ScriptedAnswer } from './fake-turn.js';

const SUITE = 'orchestrator';
/** How long a rule waits for a turn that should have ended or streamed. */
const PATIENCE_MS = 2_000;

/** Runs a turn to its end: the events it yielded and its result. @public */
export async function runTurn(run: AsyncGenerator<TurnEvent, TurnResult, void>): Promise<{ events: TurnEvent[]; result: TurnResult }> {
  const events: TurnEvent[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done) return { events, result: step.value };
    events.push(step.value);
  }
}

/** `promise`, or the rule's failure saying `what` once `ms` have passed without it settling. */
function within<T>(promise: Promise<T>, ms: number, fail: Fail, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      try {
        fail(what);
      } catch (failure) {
        reject(failure);
      }
    }, ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const tokens = (events: TurnEvent[]) =>
  events
    .filter((event) => event.type === 'token')
    .map((event) => event.content)
    .join('');

/** How an orchestrator that schedules tasks is tried: a message it reads as a request to schedule. @beta */
export interface SchedulingConformance {
  request: string;
}

/** A scheduling request no orchestrator may act on outside a user's chat message. */
const SCHEDULING_REQUEST = 'Remind me in 10 minutes to check the order status.';

const PASSAGE: RetrievedChunk = {
  content: 'Parcels ship within two working days of the order.',
  score: 0.82,
  source_id: 'source-1',
  source_name: 'Shipping handbook',
  document_id: 'document-1',
  document_filename: 'shipping.md',
  metadata: {},
};

/** A structured grounded answer, streamed in small tokens; scripted for every call, as runtimes may ask more than once. */
const groundedScript = (answer: Record<string, unknown>): ScriptedAnswer[] =>
  Array.from({ length: 6 }, () => ({ tokens: JSON.stringify(answer).match(/.{1,8}/gs)! }));

/** A turn of an agent with `response_grounding_config`, its retrieval finding `chunks`. */
function groundedTurn(config: Record<string, unknown>, script: ScriptedAnswer[], chunks: RetrievedChunk[]) {
  const model = scriptedModel(script);
  const grounding = fakeGrounding(config);
  const context = fakeTurnContext(model, {
    agent: fakeAgentSnapshot({ model_name: model.modelName, model_provider: model.provider, response_grounding_config: config }),
    retrieval: { search: async () => chunks },
    grounding,
  });
  return { model, grounding, context };
}

/**
 * What every {@link Orchestrator} must do with a turn: describe itself; stream the reply as tokens that add up to the
 * result's `reply`, with a `response_source` and an `observation`; when it asks the model, stream the model's tokens
 * as they arrive rather than after the whole answer, give the model the turn's message, end a turn whose model fails
 * with an error rather than a reply, and end a turn whose caller has gone. Through the scheduling handle (beta): it
 * schedules nothing from a message that is not a user's chat (a scheduled run's own message), and a request core
 * refuses still ends with a reply. With `scheduling`, an orchestrator that schedules also makes exactly one task
 * for the request and says so, and tells the user why core refused one. A runtime that declares `grounding` (beta)
 * answers an agent with a grounding policy through `grounding.answer` over the turn's evidence, so a strict agent
 * with no evidence takes the low-confidence path, a grounded answer is streamed with its citations, and an answer
 * citing evidence the turn did not have is never the reply.
 * @public
 */
export function orchestratorConformance(orchestrator: Orchestrator, options: { scheduling?: SchedulingConformance } = {}): ConformanceRule[] {
  const scheduling = options.scheduling;
  return [
    conformanceRule(SUITE, 'it names and describes itself and says whether it is experimental', async (fail: Fail) => {
      if (typeof orchestrator.displayName !== 'string' || orchestrator.displayName.trim() === '')
        fail(`displayName is ${JSON.stringify(orchestrator.displayName)}`);
      if (typeof orchestrator.description !== 'string' || orchestrator.description.trim() === '')
        fail(`description is ${JSON.stringify(orchestrator.description)}`);
      if (typeof orchestrator.experimental !== 'boolean') fail(`experimental is ${JSON.stringify(orchestrator.experimental)}, not a boolean`);
    }),
    conformanceRule(SUITE, 'the streamed tokens add up to the reply, which comes with a response_source and an observation', async (fail: Fail) => {
      const model = scriptedModel([{ tokens: ['Parcels ', 'ship ', 'in two days.'] }]);
      const { events, result } = await within(runTurn(orchestrator.run(fakeTurnContext(model))), PATIENCE_MS * 5, fail, 'the turn did not end');
      if (typeof result?.reply !== 'string' || result.reply === '') fail(`the reply is ${JSON.stringify(result?.reply)}`);
      if (tokens(events) !== result.reply) fail(`the tokens streamed (${JSON.stringify(tokens(events))}) are not the reply (${JSON.stringify(result.reply)})`);
      if (typeof result.response_source !== 'string' || result.response_source === '') fail(`response_source is ${JSON.stringify(result.response_source)}`);
      if (typeof result.observation !== 'object' || result.observation === null) fail(`observation is ${JSON.stringify(result.observation)}`);
      if (model.calls.length > 0 && !model.calls.some((call) => call.messages.some((m) => m.role === 'user' && m.content.includes('When do parcels ship?')))) {
        fail("it asked the model without the turn's message");
      }
    }),
    conformanceRule(SUITE, "the model's tokens are streamed as they arrive, not after the whole answer", async (fail: Fail) => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const model = scriptedModel([{ tokens: ['Parcels ', 'ship ', 'in two days.'] }], { beforeToken: (i) => (i === 1 ? held : Promise.resolve()) });
      const run = orchestrator.run(fakeTurnContext(model));
      const first = await within(
        run.next(),
        PATIENCE_MS,
        fail,
        'no token reached the client while the model held the rest of its answer: the reply is buffered',
      ).finally(release);
      if (model.calls.length === 0) return;
      if (first.done || first.value.type !== 'token') fail(`the first event is ${JSON.stringify(first.value)}, not a token`);
      await runTurn(run);
    }),
    conformanceRule(SUITE, 'a model that fails ends the turn with an error, not a reply', async (fail: Fail) => {
      const model = scriptedModel([
        { error: new Error('the model is down') },
        { error: new Error('the model is down') },
        { error: new Error('the model is down') },
      ]);
      const outcome = await within(
        runTurn(orchestrator.run(fakeTurnContext(model))).then(
          (done) => ({ done }),
          (error: unknown) => ({ error }),
        ),
        PATIENCE_MS * 5,
        fail,
        'the turn did not end after its model failed',
      );
      if (model.calls.length === 0 || 'error' in outcome) return;
      if (!outcome.done.events.some((event) => event.type === 'error'))
        fail(`the turn ended with the reply ${JSON.stringify(outcome.done.result.reply)} and no error event, as if the model had answered`);
    }),
    conformanceRule(SUITE, 'a turn whose caller has gone (its signal aborted) ends without another model call', async (fail: Fail) => {
      const controller = new AbortController();
      const model = scriptedModel([{ tokens: ['Parcels ', 'ship ', 'in ', 'two ', 'days.'] }, { tokens: ['again'] }]);
      const run = orchestrator.run(fakeTurnContext(model, { signal: controller.signal }));
      controller.abort(new Error('the client went away'));
      await within(rejectionOf(runTurn(run)), PATIENCE_MS, fail, 'the turn went on after its signal was aborted');
      if (model.calls.length > 1) fail(`it called the model ${model.calls.length} times after the turn was aborted`);
    }),
    conformanceRule(SUITE, "it schedules nothing from a message that is not a user's chat, such as a scheduled run's own", async (fail: Fail) => {
      const handle = fakeScheduling();
      const context = fakeTurnContext(scriptedModel([{ tokens: ['Noted.'] }]), {
        message: `[message_type=rule] ${scheduling?.request ?? SCHEDULING_REQUEST}`,
        message_type: 'rule',
        scheduling: handle,
      });
      await within(runTurn(orchestrator.run(context)), PATIENCE_MS * 5, fail, 'the turn did not end');
      if (handle.requests.length > 0) fail(`it asked to schedule ${JSON.stringify(handle.requests)} from a rule message`);
    }),
    conformanceRule(SUITE, 'a scheduling request core refuses still ends the turn with a reply', async (fail: Fail) => {
      const reason = 'scheduling is not offered in public chats on this host';
      const context = fakeTurnContext(scriptedModel([{ tokens: ['I cannot do that here.'] }]), {
        message: scheduling?.request ?? SCHEDULING_REQUEST,
        scheduling: fakeScheduling({ refuse: reason }),
      });
      const { result } = await within(runTurn(orchestrator.run(context)), PATIENCE_MS * 5, fail, 'the turn did not end');
      if (!result.reply) fail('the turn ended without a reply');
      if (scheduling && !result.reply.includes(reason)) fail(`the reply ${JSON.stringify(result.reply)} does not tell the user why: "${reason}"`);
    }),
    ...(orchestrator.grounding ? groundingRules(orchestrator) : []),
    ...(scheduling
      ? [
          conformanceRule(SUITE, 'a scheduling request makes exactly one task through the handle, and the reply says so', async (fail: Fail) => {
            const handle = fakeScheduling();
            const context = fakeTurnContext(scriptedModel([{ tokens: ['Done.'] }]), { message: scheduling.request, scheduling: handle });
            const { result } = await within(runTurn(orchestrator.run(context)), PATIENCE_MS * 5, fail, 'the turn did not end');
            if (handle.tasks.length !== 1) fail(`it made ${handle.tasks.length} tasks for one request`);
            else if (!result.reply) fail('the reply is empty');
            const again = await within(
              runTurn(orchestrator.run({ ...context, message: 'What are my reminders?' })),
              PATIENCE_MS * 5,
              fail,
              'the turn did not end',
            );
            if (handle.tasks.length !== 1) fail('asking for the list made another task');
            if (!again.result.reply) fail('the answer to the list request is empty');
          }),
        ]
      : []),
  ];
}

/** The rules for a runtime that declares `grounding`: it answers through the handle, whatever the policy decides. */
function groundingRules(orchestrator: Orchestrator): ConformanceRule[] {
  return [
    conformanceRule(
      SUITE,
      "a strict grounded agent with no evidence replies by its low-confidence behaviour, not with the model's words",
      async (fail: Fail) => {
        const { grounding, context } = groundedTurn(
          { enabled: true, mode: 'strict' },
          [
            { tokens: ['Parcels ', 'ship ', 'tomorrow.'] },
            ...groundedScript({ grounded: true, confidence: 1, citations: ['E1'], answer: 'Parcels ship tomorrow.' }),
          ],
          [],
        );
        const { result } = await within(runTurn(orchestrator.run(context)), PATIENCE_MS * 5, fail, 'the turn did not end');
        if (result.reply.includes('tomorrow')) fail(`the reply ${JSON.stringify(result.reply)} is the model's, though the turn had no evidence`);
        if (grounding.answers.length !== 1) fail(`grounding.answer produced ${grounding.answers.length} answers, not 1`);
        else if (grounding.answers[0]!.decision.path !== 'low_confidence_refuse') fail(`the grounding path is ${grounding.answers[0]!.decision.path}`);
        if (result.reply !== DEFAULT_GROUNDING_TEXTS.refuse) fail(`the reply ${JSON.stringify(result.reply)} is not the refusal text`);
      },
    ),
    conformanceRule(SUITE, "a grounded agent's reply is the grounded answer over the turn's evidence, streamed, with its citations", async (fail: Fail) => {
      const answer = 'Parcels ship within two working days.';
      const { grounding, context } = groundedTurn(
        { enabled: true, mode: 'strict' },
        groundedScript({ grounded: true, confidence: 0.9, citations: ['E1'], answer }),
        [PASSAGE],
      );
      const { events, result } = await within(runTurn(orchestrator.run(context)), PATIENCE_MS * 5, fail, 'the turn did not end');
      if (result.reply !== answer) fail(`the reply is ${JSON.stringify(result.reply)}, not the grounded answer ${JSON.stringify(answer)}`);
      if (tokens(events) !== result.reply) fail(`the tokens streamed (${JSON.stringify(tokens(events))}) are not the reply`);
      const decision = grounding.answers.at(-1)?.decision;
      if (!decision) fail('the reply did not come from grounding.answer');
      else if (!decision.evidence.some((e) => e.text === PASSAGE.content)) fail("the turn's retrieved passage was not in the evidence");
      else if (decision.cited_ids.join() !== 'E1') fail(`the cited ids are ${JSON.stringify(decision.cited_ids)}, not ["E1"]`);
    }),
    conformanceRule(SUITE, 'a grounded answer citing evidence the turn did not have is never the reply', async (fail: Fail) => {
      const { grounding, context } = groundedTurn(
        { enabled: true, mode: 'strict', structured_output_failure_behavior: 'refuse' },
        groundedScript({ grounded: true, confidence: 0.9, citations: ['E7'], answer: 'Parcels ship in sixty days.' }),
        [PASSAGE],
      );
      const { result } = await within(runTurn(orchestrator.run(context)), PATIENCE_MS * 5, fail, 'the turn did not end');
      if (result.reply.includes('sixty')) fail(`the reply ${JSON.stringify(result.reply)} rests on a citation of evidence that does not exist`);
      if (!grounding.answers.at(-1)?.decision.failures.some((f) => f.includes('E7'))) fail('the unknown citation E7 was not recorded as a failure');
    }),
  ];
}
