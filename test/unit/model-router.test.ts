// Model resolution of a chat turn (spec 4.2 rules 2 and 3): the router core
// hands every chat runtime, and the deterministic rule by which the final
// (reply) stage picks a routing slot.
import t from 'tap';
import type { AgentSnapshot, ModelProvider } from '@agent-host/sdk';
import { DEFAULT_CONFIG_DIR, loadConfig } from '../../core/src/index.js';
import { COMPLEX_MESSAGE_CHARACTERS, finalModelSlot } from '../../core/src/chat/final-model-rule.js';
import { TurnModelRouter, type ModelOverride } from '../../core/src/chat/model-router.js';
import { KeyedRegistry } from '@agent-host/sdk/kernel';
import { providersFromPlugin } from '../helpers/model-provider.js';

const config = loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: {} });
// Only catalog models run; these are the ones the tests route to.
for (const model_name of ['primary-model', 'tools-model', 'general-model', 'complex-model', 'reasoning-model', 'override-model', 'request-model']) {
  config.models.catalog.push({ model_name, model_provider: 'offline', display_name: '', description: 'a routing test model', category: 'test', options: {} });
}
const providers = new KeyedRegistry<ModelProvider>('model providers');
providers.forPlugin('test', { onRegister: () => undefined }).register('offline', (await providersFromPlugin({})).get('offline')!);

const slot = (model_name: string, model_temperature?: number) => ({
  model_provider: 'offline',
  model_name,
  ...(model_temperature !== undefined && { model_temperature }),
});
const ALL_SLOTS = {
  enabled: true,
  policy_version: 'p3',
  tool_call_model: slot('tools-model', 0),
  general_model: slot('general-model'),
  complex_task_model: slot('complex-model'),
  reasoning_model: slot('reasoning-model', 0.2),
};

function agent(overrides: Partial<AgentSnapshot> = {}): AgentSnapshot {
  return {
    agent_id: 'agent-1',
    name: 'Desk',
    agent_type: 'chat',
    orchestrator_key: 'core_chat_v1',
    system_prompt: null,
    model_name: 'primary-model',
    model_provider: 'offline',
    model_temperature: 0.7,
    hide_rag_source_filename: false,
    model_routing_config: ALL_SLOTS,
    mcp_response_config: null,
    mcp_runtime_config: null,
    response_grounding_config: null,
    ...overrides,
  };
}

const router = (message: string, snapshot: AgentSnapshot | null = agent(), override: ModelOverride | null = null, beforeModelCall?: () => Promise<void>) =>
  new TurnModelRouter(snapshot, override, config, providers, { message, ...(beforeModelCall && { beforeModelCall }) });

const REASONING = 'Can you explain why my refund was smaller than the order total?';
const LONG = 'My parcel arrived damaged. '.repeat(30);
const TWO_QUESTIONS = 'Where is my parcel? And when will it arrive?';
const LIST = 'I need three things:\n- a new invoice\n- a refund\n- a call back';
const SHORT = 'Where is my parcel';

t.test('a model outside the catalog is refused at the stage that would call it', async (t) => {
  const r = router(SHORT, agent({ model_name: 'unpriced-model', model_routing_config: null }));
  t.throws(() => r.chatModel('final'), /model "unpriced-model" of model_provider "offline" is not in the model catalog/);
});

t.test('the final-stage rule reads only the message and gives its reason', async (t) => {
  t.same(finalModelSlot(REASONING), { slot: 'reasoning_model', reason: 'reasoning cue "explain why"' });
  t.same(
    finalModelSlot('Please compare the two plans step by step'),
    { slot: 'reasoning_model', reason: 'reasoning cue "compare"' },
    'the first cue in the text is named',
  );
  t.same(finalModelSlot('请分析一下这个订单'), { slot: 'reasoning_model', reason: 'reasoning cue "分析"' }, 'Chinese cues count too');
  t.same(finalModelSlot('Why is my parcel late?').slot, 'general_model', 'a bare "why" is an ordinary support question');
  t.ok(LONG.length > COMPLEX_MESSAGE_CHARACTERS);
  t.same(finalModelSlot(LONG), { slot: 'complex_task_model', reason: `long message (${LONG.length} characters)` });
  t.same(finalModelSlot(TWO_QUESTIONS), { slot: 'complex_task_model', reason: 'multi-part request (2 questions)' });
  t.same(finalModelSlot(LIST), { slot: 'complex_task_model', reason: 'multi-part request (3 list items)' });
  t.same(finalModelSlot(SHORT), { slot: 'general_model', reason: 'short single request' });
  t.same(finalModelSlot(REASONING + ' ' + TWO_QUESTIONS).slot, 'reasoning_model', 'a reasoning cue outranks a multi-part request');
  t.same(finalModelSlot(SHORT), finalModelSlot(SHORT), 'the same message always routes the same way');
});

t.test('with routing enabled the final stage picks each routing slot by the message', async (t) => {
  for (const [message, role, model_name, model_temperature] of [
    [SHORT, 'general_model', 'general-model', 0.7],
    [TWO_QUESTIONS, 'complex_task_model', 'complex-model', 0.7],
    [REASONING, 'reasoning_model', 'reasoning-model', 0.2],
  ] as const) {
    const r = router(message);
    const model = r.chatModel('final');
    t.equal(model.modelName, model_name, `${role}: the reply's model`);
    t.same(
      r.finalModel && { ...r.finalModel },
      { stage: 'final', model_name, model_provider: 'offline', model_temperature, role, reason: finalModelSlot(message).reason },
      `${role}: the final model and why`,
    );
    const record = r.routingRecord();
    t.same([record.route_mode, record.policy_version, record.explicit_override_active, record.final_model_role], ['routed', 'p3', false, role]);
    t.same(record.final_model_config, { model_name, model_provider: 'offline', model_temperature }, 'a slot without a temperature takes the primary one');
  }
});

t.test('the tool stage uses tool_call_model; every decision is recorded in order with its reason', async (t) => {
  const r = router(REASONING);
  t.same(r.choose('tool_call'), { model_name: 'tools-model', model_provider: 'offline', model_temperature: 0, role: 'tool_call_model' });
  r.chatModel('final');
  t.same(r.routingRecord().stage_decisions, [
    { stage: 'tool_call', model_name: 'tools-model', model_provider: 'offline', model_temperature: 0, role: 'tool_call_model', reason: 'the tool_call stage' },
    {
      stage: 'final',
      model_name: 'reasoning-model',
      model_provider: 'offline',
      model_temperature: 0.2,
      role: 'reasoning_model',
      reason: 'reasoning cue "explain why"',
    },
  ]);
  t.equal(r.routingRecord().final_model_role, 'reasoning_model', 'the final model is the last one a runtime asked for');
});

t.test('an empty slot falls back to the primary triple', async (t) => {
  const r = router(REASONING, agent({ model_routing_config: { enabled: true, general_model: slot('general-model') } }));
  r.chatModel('tool_call');
  r.chatModel('final');
  t.same(
    r.routingRecord().stage_decisions.map((d) => [d.stage, d.role, d.model_name, d.reason]),
    [
      ['tool_call', 'primary_fallback', 'primary-model', 'the tool_call stage; tool_call_model is empty: the primary triple'],
      ['final', 'primary_fallback', 'primary-model', 'reasoning cue "explain why"; reasoning_model is empty: the primary triple'],
    ],
  );
  t.same(r.routingRecord().final_model_config, { model_name: 'primary-model', model_provider: 'offline', model_temperature: 0.7 });
  const noPrimary = router(SHORT, agent({ model_name: null, model_provider: null, model_routing_config: { enabled: true } }));
  t.same(
    noPrimary.choose('final'),
    { model_name: 'offline-extractive', model_provider: 'offline', model_temperature: 0.7, role: 'primary_fallback' },
    'an agent without a primary model falls back to the global default',
  );
});

t.test('routing disabled: every stage uses the agent primary, or the global default', async (t) => {
  const r = router(REASONING, agent({ model_routing_config: { ...ALL_SLOTS, enabled: false } }));
  for (const stage of ['tool_call', 'final', 'general'] as const) {
    t.same(
      r.choose(stage),
      { model_name: 'primary-model', model_provider: 'offline', model_temperature: 0.7, role: 'agent_primary' },
      `${stage}: agent_primary`,
    );
  }
  t.same(r.routingRecord().route_mode, 'single');
  t.equal(r.routingRecord().stage_decisions[0]!.reason, "routing is off: the agent's primary model");
  t.same(
    router(SHORT, null).choose('final'),
    { model_name: 'offline-extractive', model_provider: 'offline', model_temperature: null, role: 'global_default' },
    'no agent: the global default',
  );
});

t.test('an explicit override collapses every stage to one model path', async (t) => {
  const r = router(REASONING, agent(), { model_name: 'override-model' });
  const choices = (['tool_call', 'final', 'complex_task'] as const).map((stage) => r.choose(stage));
  t.same(
    choices,
    Array(3).fill({ model_name: 'override-model', model_provider: 'offline', model_temperature: 0.7, role: 'explicit_override' }),
    'the routing slots take no part',
  );
  const record = r.routingRecord();
  t.same([record.route_mode, record.explicit_override_active], ['explicit_override', true]);
  const temperatureOnly = router(SHORT, agent(), { model_temperature: 1.5 }).choose('final');
  t.same(
    temperatureOnly,
    { model_name: 'primary-model', model_provider: 'offline', model_temperature: 1.5, role: 'explicit_override' },
    'a temperature alone is an override too',
  );
});

t.test('every model call waits for beforeModelCall, which can stop the turn', async (t) => {
  const order: string[] = [];
  let stop = false;
  const r = router(SHORT, agent(), null, async () => {
    order.push('check');
    if (stop) throw new Error('taken over');
  });
  const model = r.chatModel('final');
  for await (const chunk of model.stream([{ role: 'user', content: SHORT }])) if (chunk.type === 'token') order.push('token');
  t.same([order[0], order.includes('token')], ['check', true], 'the check runs before the call');
  t.equal(r.calls.length, 1, 'the call is recorded');
  stop = true;
  await t.rejects(model.invoke([{ role: 'user', content: SHORT }]), /taken over/);
  t.equal(r.calls.length, 1, 'a stopped call never reaches the model');
});

t.test('collapse_to_explicit_override=false: a request model replaces only the primary triple and routing still chooses the stages', async (t) => {
  const snapshot = agent({ model_routing_config: { ...ALL_SLOTS, collapse_to_explicit_override: false, general_model: {} } });
  const r = router(SHORT, snapshot, { model_name: 'request-model', model_provider: 'offline' });
  t.match(r.choose('tool_call'), { model_name: 'tools-model', role: 'tool_call_model' }, 'the tool stage keeps its slot');
  t.match(
    r.choose('final'),
    { model_name: 'request-model', role: 'primary_fallback' },
    "an empty slot falls back to the request's model, not the agent's primary",
  );
  r.chatModel('final');
  t.match(
    r.routingRecord(),
    { route_mode: 'routed', explicit_override_active: true, collapse_to_explicit_override: false, fallback_to_primary_model: true },
    'both flags are recorded',
  );
  const collapsed = router(SHORT, agent(), { model_name: 'request-model', model_provider: 'offline' });
  t.match(collapsed.choose('tool_call'), { model_name: 'request-model', role: 'explicit_override' }, 'by default a request model collapses every stage');
  t.match(collapsed.routingRecord(), { route_mode: 'explicit_override', collapse_to_explicit_override: true });
});

t.test('fallback_to_primary_model=false: an empty slot is an error recorded in the routing record', async (t) => {
  const r = router(SHORT, agent({ model_routing_config: { ...ALL_SLOTS, fallback_to_primary_model: false, general_model: {} } }));
  t.match(r.choose('tool_call'), { model_name: 'tools-model' }, 'a filled slot is used');
  t.throws(() => r.chatModel('final'), /model_routing_config\.general_model is empty and fallback_to_primary_model is false/, 'the empty slot fails the stage');
  const record = r.routingRecord();
  t.equal(record.fallback_to_primary_model, false);
  t.match(record.stage_decisions.at(-1), { stage: 'final', role: 'unresolved', reason: /general_model is empty and fallback_to_primary_model is false/ });
  const fallingBack = router(SHORT, agent({ model_routing_config: { ...ALL_SLOTS, general_model: {} } }));
  t.match(fallingBack.choose('final'), { model_name: 'primary-model', role: 'primary_fallback' }, 'by default the primary triple answers');
});
