test('__KEY__ keeps every embedder rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest], config: { '__PLUGIN_ID__': { dim: 64 } } });
  t.after(() => kernel.stop());
  for (const rule of embedderConformance(kernel.get(extensionPoints.embedders, '__KEY__'))) {
    await t.test(rule.rule, () => rule.check());
  }
});
