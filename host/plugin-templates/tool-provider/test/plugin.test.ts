test('__KEY__ keeps every tool provider rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest] });
  t.after(() => kernel.stop());
  const sample = { tool: { name: 'count_words', args: { text: 'one two three' } } };
  for (const rule of toolProviderConformance(kernel.get(extensionPoints.toolProviders, '__KEY__'), sample)) {
    await t.test(rule.rule, () => rule.check());
  }
});
