// Issue 16 item 7: every pattern applied to user text runs in linear time. A message crafted to make the
// identifier parser backtrack (`bl #  #  # ... !`) took 165 s at 67 characters before its separator was rewritten.
import t from 'tap';
import { mcpResponseConfig } from '../../core/src/mcp/admin/agent-config.js';
import { parseIdentifiers } from '../../core/src/mcp/tracking/identifiers.js';
import { trackingIntent } from '../../core/src/mcp/pipeline/intent-gates.js';
import { MATCHED_TEXT_LIMIT } from '../../core/src/mcp/tracking/linear-pattern.js';

const elapsedMs = (run: () => unknown) => {
  const started = performance.now();
  run();
  return performance.now() - started;
};

t.test('the identifier parser is linear in the number of separators', async (t) => {
  for (const separators of [20, 30, 2_600]) {
    const message = `bl ${'#  '.repeat(separators)}!`;
    // Exponential backtracking doubled with each separator: 20 took about 2 s, 30 would take hours.
    t.ok(elapsedMs(() => parseIdentifiers(message)) < 250, `${separators} separators (${message.length} characters) parse in milliseconds`);
  }
  t.same(
    parseIdentifiers('BL no. # : 123456789'),
    [{ value: '123456789', kind: 'bill_of_lading', strong: true }],
    'labels and separators still read as before',
  );
  t.same(
    parseIdentifiers('booking number is ABCD1234567').map((id) => id.value),
    ['ABCD1234567'],
  );
});

t.test('text handed to matchers is capped', async (t) => {
  const late = `${'x '.repeat(MATCHED_TEXT_LIMIT)} BL 123456789`;
  t.same(parseIdentifiers(late), [], `nothing past the first ${MATCHED_TEXT_LIMIT} characters is parsed`);
});

t.test("administrators' patterns run on RE2: no catastrophic backtracking", async (t) => {
  const config = mcpResponseConfig.parse({ intent_gate_rules: [{ tool_capability: 'tracking', match_source_mode: 'replace', regex_patterns: ['^(a|a)*$'] }] });
  const intent = trackingIntent(config.intent_gate_rules);
  const hostile = `${'a'.repeat(5_000)}!`;
  t.ok(
    elapsedMs(() => intent.matches(hostile)) < 250,
    '`^(a|a)*$` against 5,000 characters that fail to match: milliseconds (backtracking doubles per character)',
  );
  t.equal(intent.matches(hostile), false);
  t.equal(intent.matches('aaaa'), true, 'and it still matches what it should');
  const refused = mcpResponseConfig.safeParse({ intent_gate_rules: [{ tool_capability: 'x', regex_patterns: ['(a)\\1'] }] });
  t.equal(refused.success, false, 'a pattern RE2 cannot compile (a backreference) is refused');
});
