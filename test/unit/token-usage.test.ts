// Token usage and cost arithmetic of spec 2.5: the write rules of
// `TokenUsageSummary`, rollups, and `EstimatedCostSummary` from catalog prices.
import t from 'tap';
import { DEFAULT_CONFIG_DIR, loadConfig } from '../../core/src/index.js';
import { configSchema, type CatalogModel } from '../../core/src/config/schema.js';
import { estimateTokens } from '../../core/src/usage/token-estimate.js';
import { estimateCost, estimateInteractionCost, pricingFromConfig, pricingKey, type CostEntry, type ModelPrices } from '../../core/src/usage/cost.js';
import { countTurnUsage, rollupUsage, summarizeTurnUsage, type ModelCall, type TokenUsageSummary } from '../../core/src/usage/token-usage.js';

/** A deterministic estimator: one token per word. */
const words = (text: string) => (text.trim() === '' ? 0 : text.trim().split(/\s+/).length);
const failing = () => undefined;
const throwing = () => {
  throw new Error('tokenizer broke');
};

const call = (extra: Partial<ModelCall> = {}): ModelCall => ({ model_provider: 'openai', model_name: 'gpt-4o-mini', ...extra });
const reported = (input_tokens: number, output_tokens: number) => call({ provider_usage: { input_tokens, output_tokens } });
const unreported = (prompt_text: string, reply_text: string) => call({ prompt_text, reply_text });

t.test('summarizeTurnUsage: the write rules of spec 2.5', async (t) => {
  t.test('rule 3: no model call is 0 tokens and no_model_invocation (no estimate attempted)', async (t) => {
    t.strictSame(summarizeTurnUsage([], throwing), { input_tokens: 0, output_tokens: 0, total_tokens: 0, token_usage_source: 'no_model_invocation' });
  });

  t.test('rule 1: every call provider-reported sums the provider counts', async (t) => {
    // The estimator fails: a summary that estimated anything here would be unavailable.
    const calls = [call({ provider_usage: { input_tokens: 100, output_tokens: 20 }, prompt_text: 'a b c', reply_text: 'd' }), reported(7, 3)];
    t.strictSame(summarizeTurnUsage(calls, failing), { input_tokens: 107, output_tokens: 23, total_tokens: 130, token_usage_source: 'provider_reported' });
  });

  t.test('rule 1: provider usage for only part of the calls makes the whole record tokenizer_estimated', async (t) => {
    const calls = [reported(100, 20), unreported('one two three', 'four five six seven')];
    t.strictSame(
      summarizeTurnUsage(calls, words),
      { input_tokens: 103, output_tokens: 24, total_tokens: 127, token_usage_source: 'tokenizer_estimated' },
      'reported calls keep the provider counts, the others are estimated, the source is tokenizer_estimated',
    );
    const reversed = summarizeTurnUsage([...calls].reverse(), words);
    t.equal(reversed.token_usage_source, 'tokenizer_estimated', 'the order of the calls does not matter');
    t.equal(reversed.total_tokens, 127);
  });

  t.test('rule 2: no provider usage is estimated locally from the prompt and reply texts', async (t) => {
    t.strictSame(summarizeTurnUsage([unreported('a b c', 'd e f g h')], words), {
      input_tokens: 3,
      output_tokens: 5,
      total_tokens: 8,
      token_usage_source: 'tokenizer_estimated',
    });
    t.strictSame(
      summarizeTurnUsage([unreported('a b', ''), unreported('c', 'd e')], words),
      {
        input_tokens: 3,
        output_tokens: 2,
        total_tokens: 5,
        token_usage_source: 'tokenizer_estimated',
      },
      'an empty reply is 0 tokens, not a failure',
    );
  });

  t.test('rule 2: the default estimator is the local js-tiktoken estimateTokens', async (t) => {
    const prompt = 'You are a helpful assistant. What are the opening hours?';
    const reply = 'We are open from 9:00 to 17:00, Monday to Friday.';
    const inTokens = estimateTokens(prompt)!;
    const outTokens = estimateTokens(reply)!;
    t.ok(inTokens > 0 && outTokens > 0);
    t.strictSame(summarizeTurnUsage([unreported(prompt, reply)]), {
      input_tokens: inTokens,
      output_tokens: outTokens,
      total_tokens: inTokens + outTokens,
      token_usage_source: 'tokenizer_estimated',
    });
  });

  t.test('rule 2: a stored local estimate is used as it is', async (t) => {
    const stored = call({ local_estimate: { input_tokens: 40, output_tokens: 9 } });
    t.strictSame(summarizeTurnUsage([stored, reported(10, 1)], failing), {
      input_tokens: 50,
      output_tokens: 10,
      total_tokens: 60,
      token_usage_source: 'tokenizer_estimated',
    });
  });

  t.test('rule 1: invalid provider counts count as not reported', async (t) => {
    for (const bad of [
      { input_tokens: -1, output_tokens: 2 },
      { input_tokens: Number.NaN, output_tokens: 2 },
      { input_tokens: 1.5, output_tokens: 2 },
    ]) {
      const s = summarizeTurnUsage([call({ provider_usage: bad, prompt_text: 'a b', reply_text: 'c' })], words);
      t.strictSame(s, { input_tokens: 2, output_tokens: 1, total_tokens: 3, token_usage_source: 'tokenizer_estimated' }, JSON.stringify(bad));
    }
    t.equal(summarizeTurnUsage([call({ provider_usage: null, prompt_text: 'a', reply_text: 'b' })], words).token_usage_source, 'tokenizer_estimated');
  });

  t.test('rule 4: a failed estimate makes the record unavailable with 0 tokens', async (t) => {
    const unavailable = { input_tokens: 0, output_tokens: 0, total_tokens: 0, token_usage_source: 'unavailable' };
    t.strictSame(summarizeTurnUsage([unreported('a b', 'c')], failing), unavailable, 'the estimator returns undefined');
    t.strictSame(summarizeTurnUsage([unreported('a b', 'c')], throwing), unavailable, 'the estimator throws');
    t.strictSame(
      summarizeTurnUsage([unreported('a b', 'c')], () => -3),
      unavailable,
      'the estimator returns a nonsense count',
    );
    t.strictSame(summarizeTurnUsage([call({ prompt_text: 'a b' })], words), unavailable, 'no reply text to estimate');
    t.strictSame(summarizeTurnUsage([call()], words), unavailable, 'no texts and no counts (a stored unavailable call)');
    t.strictSame(summarizeTurnUsage([reported(100, 20), unreported('a', 'b')], failing), unavailable, 'one failed estimate in a mixed record');
    const onlyReplyFails = (text: string) => (text === 'reply' ? undefined : words(text));
    t.strictSame(summarizeTurnUsage([unreported('a b', 'ok'), unreported('c', 'reply')], onlyReplyFails), unavailable, 'any call failing is enough');
  });
});

t.test('rollupUsage sums tokens and counts each token_usage_source', async (t) => {
  const s = (input_tokens: number, output_tokens: number, token_usage_source: TokenUsageSummary['token_usage_source']): TokenUsageSummary => ({
    input_tokens,
    output_tokens,
    total_tokens: input_tokens + output_tokens,
    token_usage_source,
  });
  t.strictSame(rollupUsage([]), {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    provider_reported_count: 0,
    tokenizer_estimated_count: 0,
    no_model_invocation_count: 0,
    unavailable_count: 0,
  });
  const summaries = [
    s(100, 20, 'provider_reported'),
    s(50, 5, 'provider_reported'),
    s(30, 7, 'tokenizer_estimated'),
    s(0, 0, 'no_model_invocation'),
    s(0, 0, 'no_model_invocation'),
    s(0, 0, 'no_model_invocation'),
    s(0, 0, 'unavailable'),
  ];
  t.strictSame(rollupUsage(summaries), {
    input_tokens: 180,
    output_tokens: 32,
    total_tokens: 212,
    provider_reported_count: 2,
    tokenizer_estimated_count: 1,
    no_model_invocation_count: 3,
    unavailable_count: 1,
  });
  t.strictSame(
    rollupUsage([summarizeTurnUsage([reported(5, 5)]), summarizeTurnUsage([]), summarizeTurnUsage([unreported('a', 'b')], failing)]),
    {
      input_tokens: 5,
      output_tokens: 5,
      total_tokens: 10,
      provider_reported_count: 1,
      tokenizer_estimated_count: 0,
      no_model_invocation_count: 1,
      unavailable_count: 1,
    },
    'rollups of summaries made by summarizeTurnUsage',
  );
});

const usage = (input_tokens: number, output_tokens: number, token_usage_source: TokenUsageSummary['token_usage_source'] = 'provider_reported') => ({
  input_tokens,
  output_tokens,
  token_usage_source,
});
const entry = (model_provider: string, model_name: string, u: CostEntry['usage']): CostEntry => ({ model_provider, model_name, usage: u });
const table = (rows: [string, string, ModelPrices][]) => new Map(rows.map(([p, n, prices]) => [pricingKey(p, n), prices]));
const mini = table([['openai', 'gpt-4o-mini', { input_price_per_million_tokens: 0.15, output_price_per_million_tokens: 0.6 }]]);

t.test('estimateCost with full pricing', async (t) => {
  t.strictSame(estimateCost([entry('openai', 'gpt-4o-mini', usage(1_000_000, 1_000_000))], mini), {
    input_cost_usd: 0.15,
    output_cost_usd: 0.6,
    total_cost_usd: 0.75,
    estimated_interaction_count: 1,
    missing_pricing_count: 0,
  });
  t.strictSame(
    estimateCost([entry('openai', 'gpt-4o-mini', usage(1234, 567)), entry('openai', 'gpt-4o-mini', usage(1000, 100, 'tokenizer_estimated'))], mini),
    // input 2234 * 0.15 / 1e6 = 0.0003351; output 667 * 0.6 / 1e6 = 0.0004002; total 0.0007353
    { input_cost_usd: 0.000335, output_cost_usd: 0.0004, total_cost_usd: 0.000735, estimated_interaction_count: 2, missing_pricing_count: 0 },
    'provider-reported and estimated usage are both priced',
  );
  const free = table([['offline', 'offline-extractive', { input_price_per_million_tokens: 0, output_price_per_million_tokens: 0 }]]);
  t.strictSame(
    estimateCost([entry('offline', 'offline-extractive', usage(500, 50, 'tokenizer_estimated'))], free),
    { input_cost_usd: 0, output_cost_usd: 0, total_cost_usd: 0, estimated_interaction_count: 1, missing_pricing_count: 0 },
    'a price of 0 is a configured price',
  );
  t.strictSame(estimateCost([], mini), { input_cost_usd: 0, output_cost_usd: 0, total_cost_usd: 0, estimated_interaction_count: 0, missing_pricing_count: 0 });
});

t.test('a turn whose calls use different models: each call priced at its own model, summed', async (t) => {
  const routed = table([
    ['openai', 'tools-model', { input_price_per_million_tokens: 1, output_price_per_million_tokens: 2 }],
    ['openai', 'final-model', { input_price_per_million_tokens: 10, output_price_per_million_tokens: 20 }],
  ]);
  const calls: ModelCall[] = [
    { model_provider: 'openai', model_name: 'tools-model', provider_usage: { input_tokens: 100, output_tokens: 10 } },
    { model_provider: 'openai', model_name: 'final-model', prompt_text: 'one two three', reply_text: 'four five' },
  ];
  const counted = countTurnUsage(calls, words);
  t.strictSame(counted.summary, summarizeTurnUsage(calls, words), 'the same summary as summarizeTurnUsage');
  t.strictSame(
    counted.calls,
    [
      { model_provider: 'openai', model_name: 'tools-model', input_tokens: 100, output_tokens: 10 },
      { model_provider: 'openai', model_name: 'final-model', input_tokens: 3, output_tokens: 2 },
    ],
    'each call keeps the counts summed into the record',
  );
  // tools-model: 100 * 1 + 10 * 2 = 120; final-model: 3 * 10 + 2 * 20 = 70 (micro-USD)
  t.strictSame(
    estimateInteractionCost(counted.calls, counted.summary.token_usage_source, routed),
    {
      input_cost_usd: 0.00013,
      output_cost_usd: 0.00006,
      total_cost_usd: 0.00019,
      estimated_interaction_count: 1,
      missing_pricing_count: 0,
    },
    'one interaction, priced call by call (the final model alone would give 0.00113 + 0.00024)',
  );
  const partly = countTurnUsage([...calls, { model_provider: 'openai', model_name: 'unpriced', provider_usage: { input_tokens: 1, output_tokens: 1 } }], words);
  t.strictSame(
    estimateInteractionCost(partly.calls, partly.summary.token_usage_source, routed),
    { input_cost_usd: 0, output_cost_usd: 0, total_cost_usd: 0, estimated_interaction_count: 0, missing_pricing_count: 1 },
    'one unpriced call leaves the interaction unestimated and counts it once as missing pricing',
  );
  const failed = countTurnUsage([{ model_provider: 'openai', model_name: 'final-model', prompt_text: 'x' }], failing);
  t.strictSame(
    failed.calls,
    [{ model_provider: 'openai', model_name: 'final-model', input_tokens: 0, output_tokens: 0 }],
    'an unavailable record counts 0 for every call',
  );
  t.strictSame(
    estimateInteractionCost(failed.calls, 'unavailable', routed).estimated_interaction_count +
      estimateInteractionCost(failed.calls, 'unavailable', routed).missing_pricing_count,
    0,
    'priced but unavailable: neither estimated nor missing',
  );
  t.strictSame(estimateInteractionCost([], 'no_model_invocation', routed).total_cost_usd, 0, 'no model call costs nothing');
});

t.test('estimateCost rounds to 6 decimals once, at the end', async (t) => {
  const oneToken = Array.from({ length: 4 }, () => entry('openai', 'gpt-4o-mini', usage(1, 1)));
  // Per item: input 0.00000015 -> 0, output 0.0000006 -> 0.000001; rounding per item would give 0 and 0.000004.
  t.strictSame(estimateCost(oneToken, mini), {
    input_cost_usd: 0.000001, // 4 * 0.00000015 = 0.0000006
    output_cost_usd: 0.000002, // 4 * 0.0000006 = 0.0000024
    total_cost_usd: 0.000003, // 0.000003 exactly
    estimated_interaction_count: 4,
    missing_pricing_count: 0,
  });
  const cheap = table([['p', 'm', { input_price_per_million_tokens: 0.4, output_price_per_million_tokens: 0.4 }]]);
  t.strictSame(
    estimateCost([entry('p', 'm', usage(1, 1))], cheap),
    { input_cost_usd: 0, output_cost_usd: 0, total_cost_usd: 0.000001, estimated_interaction_count: 1, missing_pricing_count: 0 },
    'the total is rounded from the exact sum (0.0000008), not from the rounded parts',
  );
  const half = table([['p', 'm', { input_price_per_million_tokens: 0.5, output_price_per_million_tokens: 2.5 }]]);
  t.strictSame(
    estimateCost([entry('p', 'm', usage(1, 1))], half),
    { input_cost_usd: 0.000001, output_cost_usd: 0.000003, total_cost_usd: 0.000003, estimated_interaction_count: 1, missing_pricing_count: 0 },
    'exact halves round up (0.0000005 -> 0.000001, 0.0000025 -> 0.000003); no float drift',
  );
  const many = Array.from({ length: 10 }, () => entry('openai', 'gpt-4o-mini', usage(3, 7)));
  const c = estimateCost(many, mini); // input 30 * 0.15 = 4.5e-6, output 70 * 0.6 = 4.2e-5
  t.equal(c.input_cost_usd, 0.000005);
  t.equal(c.output_cost_usd, 0.000042);
  t.equal(c.total_cost_usd, 0.000047); // 4.65e-5 -> 4.7e-5
});

t.test('estimateCost with partial and missing pricing', async (t) => {
  const partial = table([
    ['openai', 'input-only', { input_price_per_million_tokens: 1 }],
    ['openai', 'output-only', { output_price_per_million_tokens: 1 }],
    ['openai', 'gpt-4o-mini', { input_price_per_million_tokens: 0.15, output_price_per_million_tokens: 0.6 }],
  ]);
  const entries = [
    entry('openai', 'input-only', usage(1_000_000, 0)),
    entry('openai', 'output-only', usage(0, 1_000_000)),
    entry('openai', 'unpriced', usage(10, 10)),
    entry('azure', 'gpt-4o-mini', usage(10, 10)), // same model name, other provider: not priced
    entry('openai', 'gpt-4o-mini', usage(2_000_000, 0)),
  ];
  t.strictSame(
    estimateCost(entries, partial),
    {
      input_cost_usd: 0.3,
      output_cost_usd: 0,
      total_cost_usd: 0.3,
      estimated_interaction_count: 1,
      missing_pricing_count: 4,
    },
    'only pairs with both prices are priced; the rest count as missing pricing',
  );
  t.strictSame(
    estimateCost(entries, new Map()),
    {
      input_cost_usd: 0,
      output_cost_usd: 0,
      total_cost_usd: 0,
      estimated_interaction_count: 0,
      missing_pricing_count: 5,
    },
    'no pricing at all',
  );
});

t.test('estimateCost: no-model interactions cost 0 and are not missing; unavailable ones are not estimated', async (t) => {
  const entries = [
    entry('offline', 'unpriced', usage(0, 0, 'no_model_invocation')),
    entry('openai', 'gpt-4o-mini', usage(0, 0, 'no_model_invocation')),
    entry('openai', 'gpt-4o-mini', usage(0, 0, 'unavailable')),
    entry('openai', 'unpriced', usage(0, 0, 'unavailable')),
    entry('openai', 'gpt-4o-mini', usage(1_000_000, 0)),
  ];
  t.strictSame(estimateCost(entries, mini), {
    input_cost_usd: 0.15,
    output_cost_usd: 0,
    total_cost_usd: 0.15,
    estimated_interaction_count: 1,
    missing_pricing_count: 1,
  });
});

t.test('pricingFromConfig and the catalog price keys', async (t) => {
  const config = loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: {} });
  const pricing = pricingFromConfig(config);
  t.strictSame(pricing.get(pricingKey('offline', 'offline-extractive')), { input_price_per_million_tokens: 0, output_price_per_million_tokens: 0 });
  t.strictSame(pricing.get(pricingKey('openai', 'gpt-4o-mini')), { input_price_per_million_tokens: 0.15, output_price_per_million_tokens: 0.6 });
  t.strictSame(estimateCost([entry('openai', 'gpt-4o-mini', usage(1_000_000, 1_000_000))], pricing).total_cost_usd, 0.75, 'default.toml prices gpt-4o-mini');

  const model = (extra: Partial<CatalogModel>): CatalogModel => ({
    model_name: 'm',
    model_provider: 'p',
    display_name: '',
    description: 'd',
    category: 'chat',
    options: {},
    ...extra,
  });
  const custom = pricingFromConfig({
    models: {
      catalog: [
        model({ model_name: 'free-form' }),
        model({ model_name: 'half', input_price_per_million_tokens: 2 }),
        model({ model_name: 'dup', input_price_per_million_tokens: 1, output_price_per_million_tokens: 1 }),
        model({ model_name: 'dup', input_price_per_million_tokens: 9, output_price_per_million_tokens: 9 }),
      ],
    },
  });
  t.notOk(custom.has(pricingKey('p', 'free-form')), 'an entry without prices is left out');
  t.strictSame(custom.get(pricingKey('p', 'dup')), { input_price_per_million_tokens: 1, output_price_per_million_tokens: 1 }, 'the first entry of a pair wins');
  t.strictSame(estimateCost([entry('p', 'half', usage(10, 10)), entry('p', 'free-form', usage(10, 10))], custom), {
    input_cost_usd: 0,
    output_cost_usd: 0,
    total_cost_usd: 0,
    estimated_interaction_count: 0,
    missing_pricing_count: 2,
  });
  t.not(pricingKey('a:b', 'c'), pricingKey('a', 'b:c'), 'keys of different pairs never collide');

  const models = configSchema.shape.models;
  const parse = (price: unknown) =>
    models.safeParse({ default_model_provider: 'p', default_model_name: 'm', catalog: [{ ...model({}), input_price_per_million_tokens: price }] }).success;
  t.ok(parse(0.15));
  t.ok(parse(0));
  t.ok(parse(undefined), 'prices are optional');
  t.notOk(parse(-0.01), 'a negative price is refused');
  t.notOk(parse('0.15'), 'a price is a number');
  t.notOk(parse(Number.POSITIVE_INFINITY), 'an infinite price is refused');
});
