test('__KEY__ keeps every model provider rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest] });
  t.after(() => kernel.stop());
  const spec = { model_name: 'echo-1', temperature: null, timeoutMs: 10_000, options: {} };
  for (const rule of modelProviderConformance(kernel.get(extensionPoints.modelProviders, '__KEY__'), spec)) {
    await t.test(rule.rule, () => rule.check());
  }
});
