// The pure rules under the MCP tool pipeline (spec 4.13): identifier
// parsing, tracking signals, the gates' verdicts the HTTP tests cannot reach,
// build_tool_arguments, the tracking projection, payload rendering, masking,
// the cut of a large result.
import t from 'tap';
import { buildToolArguments } from '../../core/src/mcp/tracking/arguments.js';
import { attemptGate, preGenerationGate } from '../../core/src/mcp/pipeline/gates.js';
import { parseIdentifiers, traceable } from '../../core/src/mcp/tracking/identifiers.js';
import { maskSensitive } from '../../core/src/mcp/pipeline/masking.js';
import { businessPayload, fieldCatalog, renderDirectResponse, resultForContext } from '../../core/src/mcp/pipeline/payloads.js';
import { matchQuickRule } from '../../core/src/mcp/pipeline/quick-match.js';
import { builtInTrackingIntent, projectTrackingResult, sameTool, trackingSignals } from '../../core/src/mcp/tracking/tracking.js';

const TRACKING_SCHEMA = {
  type: 'object',
  properties: { selectNo: { type: 'string' }, query: { type: 'string' }, round: { type: 'integer' } },
  required: ['selectNo'],
};
const values = (text: string) => parseIdentifiers(text).map((id) => id.value);

t.test('identifier parsing accepts the forms of 4.13 and common typos', async (t) => {
  const cases: [string, string[], string][] = [
    ['selectNo=EGLV149302839517', ['EGLV149302839517'], 'selectNo=...'],
    ['selcetNo: abc12345678', ['ABC12345678'], 'a misspelt selectNo label'],
    ['my B/L is EGLV 1493-0283-9517', ['EGLV149302839517'], 'a bill of lading with spaces and dashes'],
    ['bill of ladding no. COSU6300123450', ['COSU6300123450'], 'a misspelt bill of lading'],
    ['container MSCU1234567', ['MSCU1234567'], 'an ISO container number'],
    ['contianer tghu 765432 1', ['TGHU7654321'], 'a spaced container number after a misspelt label'],
    ['MSCU12345O7 please', ['MSCU1234507'], 'O typed for 0 in a container number'],
    ['booking: 7012345678', ['7012345678'], 'a booking number'],
    ['bokking no 88776655', ['88776655'], 'a misspelt booking label'],
    ['where is 123456789012', ['123456789012'], 'pure digits'],
    ['status of HLCUSHA2307ABCD1', ['HLCUSHA2307ABCD1'], 'mixed alphanumeric'],
    ['call me at 5 pm, ref 123', [], 'short numbers are not identifiers'],
    ['the year 2026 was good', [], 'a year is not an identifier'],
  ];
  for (const [text, expected, rule] of cases) t.same(values(text), expected, rule);
  t.same(values(`MSCU1234567 and TGHU7654321 and MSCU1234567`), ['MSCU1234567', 'TGHU7654321'], 'distinct, in order');
  t.ok(parseIdentifiers('container MSCU1234567')[0]!.strong, 'labelled and container-shaped identifiers are strong');
  t.notOk(parseIdentifiers('123456789012')[0]!.strong, 'bare digits are weak');
  t.ok(traceable('mscu-1234567', ['I meant MSCU 1234567']), 'traceability compares normalised values');
  t.notOk(traceable('ZZZU9999999', ['I meant MSCU1234567']), 'a value the user never gave is not traceable');
});

t.test('tracking signals: intent, message and history identifiers, follow-ups; weak identifiers need backing', async (t) => {
  const plain = trackingSignals('what is 12345678 times 2', [], builtInTrackingIntent);
  t.same(plain.messageIds, [], 'a bare number without tracking intent or context is not an identifier');
  const backed = trackingSignals('12345678', ['I want to track my parcel'], builtInTrackingIntent);
  t.same([backed.messageIds.map((i) => i.value), backed.followUp], [['12345678'], true], 'a bare identifier reply in a tracking conversation');
  const elliptical = trackingSignals('and now?', ['track MSCU1234567'], builtInTrackingIntent);
  t.same([elliptical.followUp, elliptical.historyIds.map((i) => i.value)], [true, ['MSCU1234567']], 'an elliptical follow-up');
  t.notOk(trackingSignals('and now?', [], builtInTrackingIntent).followUp, 'no follow-up without tracking history');
  t.ok(sameTool('query_tracking', 'query_tracking9'), 'the two tracking tools are one capability');
});

t.test('gate verdicts', async (t) => {
  const gate = (message: string, history: string[] = [], extra: Partial<Parameters<typeof preGenerationGate>[0]> = {}) =>
    preGenerationGate({
      toolName: 'query_tracking9',
      schema: TRACKING_SCHEMA,
      messageType: 'user_chat',
      message,
      tracking: trackingSignals(message, history, builtInTrackingIntent),
      allowFollowUp: true,
      decision: null,
      ...extra,
    });
  t.match(
    gate('track MSCU1234567 and TGHU7654321'),
    { should_attempt: false, outcome: 'blocked', guidance: { kind: 'ambiguous_identifier', candidate_identifiers: ['MSCU1234567', 'TGHU7654321'] } },
    'two identifiers in the current message are ambiguous',
  );
  t.match(
    gate('where is it?', ['track MSCU1234567'], { allowFollowUp: false }),
    { outcome: 'blocked', guidance: { kind: 'missing_arguments' } },
    'a refused follow-up asks for the number',
  );
  t.match(
    attemptGate('query_tracking', TRACKING_SCHEMA, { selectNo: 'MSCU1234567, TGHU7654321' }),
    { should_attempt: false, outcome: 'blocked', guidance: { kind: 'ambiguous_identifier' } },
    'the attempt gate refuses an argument holding two identifiers',
  );
  t.match(
    attemptGate('query_tracking', TRACKING_SCHEMA, {}),
    { should_attempt: false, guidance: { missing_identifiers: ['selectNo'], candidate_identifier_arguments: ['selectNo'] } },
    'and a missing one',
  );
  t.match(attemptGate('echo', {}, {}), { should_attempt: true }, 'other tools have no identifier gate');
  const custom = preGenerationGate({
    toolName: 'lookup',
    schema: { properties: { order_id: {} } },
    messageType: 'user_chat',
    message: 'x',
    tracking: null,
    allowFollowUp: true,
    decision: { selected_tool_name: 'lookup', should_call_now: false, missing_required_arguments: ['order_id'], reason: '' },
  });
  t.match(
    custom,
    { outcome: 'blocked', guidance: { missing_identifiers: ['order_id'], candidate_identifier_arguments: ['order_id'] } },
    'generic guidance names the identifier arguments',
  );
});

t.test('build_tool_arguments keeps traceable identifiers only, extracts from the current message only, adds query and round', async (t) => {
  const built = buildToolArguments({
    toolName: 'lookup',
    schema: { properties: { order_id: { type: 'string' }, city: { type: 'string' } }, required: ['order_id'] },
    generated: { OrderId: 'A-99887766', city: 'Lyon' },
    message: 'where is my order?',
    userHistory: ['my order is A-11223344'],
    messageIds: [],
    round: 2,
  });
  t.same(
    built.arguments,
    { city: 'Lyon', query: 'where is my order?', round: 2 },
    'an identifier found nowhere in the user messages is dropped; other values stay',
  );
  t.same(built.canonicalized, [{ from: 'OrderId', to: 'order_id' }]);
  const bare = buildToolArguments({
    toolName: 'lookup',
    schema: { properties: { order_id: { type: 'string' } }, required: ['order_id'] },
    generated: {},
    message: 'AB12345678',
    userHistory: [],
    messageIds: [],
    round: 1,
  });
  t.equal(bare.arguments.order_id, 'AB12345678', 'a bare identifier reply fills the one open required field');
  const fromHistory = buildToolArguments({
    toolName: 'lookup',
    schema: { properties: { order_id: { type: 'string' } }, required: ['order_id'] },
    generated: {},
    message: 'and that one?',
    userHistory: ['AB12345678'],
    messageIds: [],
    round: 1,
  });
  t.notOk('order_id' in fromHistory.arguments, 'deterministic extraction never reads history');
});

t.test('the tracking projection keeps only the listed fields, curricon from the last event', async (t) => {
  const raw = {
    tool: 'internal',
    selectNo: 'X',
    secretInternal: 1,
    response: {
      selectNo: 'MSCU1234567',
      extra: true,
      tracking: [
        {
          other: 1,
          trackingSub: [
            {
              equipment: '20GP',
              currentStatus: 'Gate out',
              shipmentType: 'FCL',
              vesselCode: 'V1',
              containerNumberListMap: [
                {
                  currentNewStatus: 'Gate out',
                  currentTime: 't2',
                  currentLocation: 'Rotterdam',
                  internalId: 9,
                  currList: [
                    { tile: 'A', time: 't1', des: 'a', addtype: 'LOAD', internal: 1 },
                    { tile: 'B', time: 't2', des: 'b', addtype: 'GATE_OUT' },
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
  };
  const projected = projectTrackingResult(raw, 'query_tracking9', 'MSCU1234567') as any;
  t.same(projected, {
    tool: 'query_tracking9',
    selectNo: 'MSCU1234567',
    response: {
      selectNo: 'MSCU1234567',
      tracking: [
        {
          trackingSub: [
            {
              equipment: '20GP',
              currentStatus: 'Gate out',
              shipmentType: 'FCL',
              containerNumberListMap: [
                {
                  currentNewStatus: 'Gate out',
                  currentTime: 't2',
                  currentLocation: 'Rotterdam',
                  curricon: 'GATE_OUT',
                  currList: [
                    { tile: 'A', time: 't1', des: 'a', addtype: 'LOAD' },
                    { tile: 'B', time: 't2', des: 'b', addtype: 'GATE_OUT' },
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
  });
  t.same(Object.keys(businessPayload(projected, 'query_tracking9') as object), ['selectNo', 'tracking'], 'the business payload unwraps response');
  t.ok(fieldCatalog(businessPayload(projected, 'query_tracking9')).some((f) => f.path === 'tracking.trackingSub.containerNumberListMap.curricon'));
});

t.test('direct-response rendering and masking', async (t) => {
  const payload = { a: { b: 'x' }, list: [{ v: 1 }, { v: 2 }], empty: '' };
  const rule = { output_mode: 'json_subset' as const, selected_fields: ['a.b', 'list.v'], prefix_text: '', suffix_text: '', wrap_json_code_block: false };
  t.same(JSON.parse(renderDirectResponse(payload, rule).reply), { 'a.b': 'x', 'list.v': [1, 2] });
  t.same(renderDirectResponse(payload, { ...rule, selected_fields: ['empty', 'missing'] }).fallback, true, 'all-empty fields fall back');
  t.equal(renderDirectResponse(payload, { ...rule, output_mode: 'text', prefix_text: 'P', suffix_text: 'S' }).reply, 'P\nb: x\nv: 1, 2\nS');
  t.match(renderDirectResponse(payload, { ...rule, output_mode: 'raw_json', wrap_json_code_block: true }).reply, /^```json\n\{/);
  t.same(maskSensitive({ Authorization: 'Bearer k', nested: { api_key: 'k', note: 'says sk-123 here' }, token: null }, ['sk-123']), {
    Authorization: '***',
    nested: { api_key: '***', note: 'says *** here' },
    token: null,
  });
});

t.test('a tool result longer than result_context_chars reaches the runtime cut, saying so', async (t) => {
  const small = { status: 'ok', items: [1, 2, 3] };
  t.equal(resultForContext(small, 100), small, 'a result that fits is passed as it is, not as text');
  t.equal(resultForContext('y'.repeat(100), 100), 'y'.repeat(100), 'exactly at the limit still fits');
  t.equal(
    resultForContext('y'.repeat(250), 100),
    `${'y'.repeat(100)}\n[cut: the tool answered 250 characters; the first 100 are shown ([mcp] result_context_chars)]`,
  );
  const large = { rows: Array.from({ length: 50 }, (_, i) => ({ i })) };
  const text = JSON.stringify(large);
  t.equal(
    resultForContext(large, 100),
    `${text.slice(0, 100)}\n[cut: the tool answered ${text.length} characters; the first 100 are shown ([mcp] result_context_chars)]`,
    'an object is cut as its JSON',
  );
  t.equal(resultForContext(null, 100), null);
  t.equal(resultForContext(undefined, 100), undefined, 'no result stays none');
});

t.test('quick-match prefixes: a command, the longest first, case-insensitive', async (t) => {
  const rule = (prefix: string) => ({ prefix, enabled: true, mcp_server_id: 's', tool_name: 't', suffix_parameter_name: 'p', response_rule_key: null });
  const rules = [rule('/t'), rule('/track')];
  t.match(matchQuickRule(rules, '  /TRACK  MSCU1234567 '), { rule: { prefix: '/track' }, suffix: 'MSCU1234567' });
  t.equal(matchQuickRule(rules, '/tracking now'), null, 'a prefix must end the command word');
  t.match(matchQuickRule([rule('查询')], '查询 MSCU1234567'), { suffix: 'MSCU1234567' });
  t.equal(matchQuickRule([{ ...rule('/t'), enabled: false }], '/t x'), null, 'disabled rules do not match');
});
