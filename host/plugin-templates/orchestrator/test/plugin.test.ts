test('__KEY__ keeps every orchestrator rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest], config: { '__PLUGIN_ID__': { preamble: 'Be brief.' } } });
  t.after(() => kernel.stop());
  for (const rule of orchestratorConformance(kernel.get(extensionPoints.orchestrators, '__KEY__'))) {
    await t.test(rule.rule, () => rule.check());
  }
});
