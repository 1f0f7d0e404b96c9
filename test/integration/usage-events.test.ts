// Model calls stored in `model_usage_events` by the UsageRecorder are read
// back per scope and summarized by the write rules of spec 2.5.
import type { Logger } from '@agent-host/sdk';
import t from 'tap';
import { openDatabase } from '../../core/src/db/database.js';
import { migrate } from '../../core/src/db/migrator.js';
import { MIGRATIONS_DIR } from '../../core/src/paths.js';
import { createUsageRecorder } from '../../core/src/services/usage.js';
import { rollupUsage, summarizeTurnUsage } from '../../core/src/usage/token-usage.js';
import { groupCallsByScope, readUsageCalls } from '../../core/src/usage/usage-event-store.js';
import { createTestDatabase } from '../helpers/services.js';

const noop = () => {};
const quietLog: Logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => quietLog };
const failing = () => undefined;

t.test('readUsageCalls reads the stored calls of a scope', async (t) => {
  const url = await createTestDatabase(t, { empty: true });
  const sequelize = openDatabase(url, 2);
  try {
    const applied = await migrate(sequelize, MIGRATIONS_DIR, quietLog);
    t.ok(applied.includes('0003-model-usage-events.js'), 'the usage table is migrated');
    const recorder = createUsageRecorder(sequelize, 'test');
    const turn = (scope_id: string) => ({ scope_kind: 'turn', scope_id });
    const mini = { model_provider: 'openai', model_name: 'gpt-4o-mini' };
    await recorder.record(turn('t-1'), { ...mini, input_tokens: 100, output_tokens: 20, source: 'provider_reported' });
    await recorder.record(turn('t-1'), { ...mini, model_name: 'gpt-4o', input_tokens: 50, output_tokens: 5, source: 'provider_reported' });
    await recorder.record(turn('t-2'), { ...mini, input_tokens: 30, output_tokens: 7, source: 'provider_reported' });
    await recorder.record(turn('t-2'), { ...mini, input_tokens: 12, output_tokens: 4, source: 'tokenizer_estimated' });
    await recorder.record(turn('t-3'), {
      model_provider: 'offline',
      model_name: 'offline-extractive',
      input_tokens: 0,
      output_tokens: 0,
      source: 'no_model_invocation',
    });
    await recorder.record(turn('t-4'), { ...mini, input_tokens: 0, output_tokens: 0, source: 'unavailable' });
    await recorder.record({ scope_kind: 'evaluation_item', scope_id: 't-1' }, { ...mini, input_tokens: 999, output_tokens: 999, source: 'provider_reported' });

    const t1 = await readUsageCalls(sequelize, 'turn', ['t-1']);
    t.strictSame(
      t1,
      [
        { scope_kind: 'turn', scope_id: 't-1', model_provider: 'openai', model_name: 'gpt-4o-mini', provider_usage: { input_tokens: 100, output_tokens: 20 } },
        { scope_kind: 'turn', scope_id: 't-1', model_provider: 'openai', model_name: 'gpt-4o', provider_usage: { input_tokens: 50, output_tokens: 5 } },
      ],
      'only the scope kind and id asked for, in recorded order; another kind with the same id is left out',
    );
    t.strictSame(summarizeTurnUsage(t1, failing), { input_tokens: 150, output_tokens: 25, total_tokens: 175, token_usage_source: 'provider_reported' });

    const t2 = await readUsageCalls(sequelize, 'turn', ['t-2']);
    t.strictSame(
      t2.map((c) => [c.provider_usage, c.local_estimate]),
      [
        [{ input_tokens: 30, output_tokens: 7 }, undefined],
        [undefined, { input_tokens: 12, output_tokens: 4 }],
      ],
      'an estimated row comes back as a local estimate',
    );
    t.strictSame(
      summarizeTurnUsage(t2, failing),
      { input_tokens: 42, output_tokens: 11, total_tokens: 53, token_usage_source: 'tokenizer_estimated' },
      'a partly reported turn is tokenizer_estimated, from stored counts only',
    );

    t.strictSame(await readUsageCalls(sequelize, 'turn', ['t-3']), [], 'a no_model_invocation row is not a model call');
    t.equal(summarizeTurnUsage(await readUsageCalls(sequelize, 'turn', ['t-3'])).token_usage_source, 'no_model_invocation');
    t.strictSame(summarizeTurnUsage(await readUsageCalls(sequelize, 'turn', ['t-4'])), {
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      token_usage_source: 'unavailable',
    });
    t.strictSame(await readUsageCalls(sequelize, 'turn', []), [], 'no scope ids, no calls');
    t.strictSame(await readUsageCalls(sequelize, 'turn', ['nope']), []);

    // A scheduled run's derived usage: read from its linked turns.
    const ids = ['t-1', 't-2', 't-3', 't-4', 't-5', 't-1'];
    const calls = await readUsageCalls(sequelize, 'turn', ids);
    t.equal(calls.length, 5, 'a repeated scope id does not repeat its calls');
    const byTurn = groupCallsByScope(calls, ids);
    t.strictSame([...byTurn.keys()], ['t-1', 't-2', 't-3', 't-4', 't-5'], 'every scope asked for, in order');
    t.strictSame(byTurn.get('t-5'), []);
    t.strictSame(rollupUsage([...byTurn.values()].map((c) => summarizeTurnUsage(c, failing))), {
      input_tokens: 192,
      output_tokens: 36,
      total_tokens: 228,
      provider_reported_count: 1,
      tokenizer_estimated_count: 1,
      no_model_invocation_count: 2,
      unavailable_count: 1,
    });
    t.strictSame(
      summarizeTurnUsage(
        calls.filter((c) => c.scope_id !== 't-4'),
        failing,
      ),
      { input_tokens: 192, output_tokens: 36, total_tokens: 228, token_usage_source: 'tokenizer_estimated' },
      'the calls of several turns summarize as one record',
    );
  } finally {
    await sequelize.close();
  }
});
