test('__KEY__ keeps every tool backend rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest] });
  t.after(() => kernel.stop());
  const sample = {
    server: { server_id: 'test-server', transport_type: '__KEY__', connection_config: { greeting: 'Hello' }, secret: null },
    tool: { name: 'echo', args: { text: 'world' } },
    invalidConfig: { greeting: 42 },
  };
  for (const rule of toolBackendConformance(kernel.get(extensionPoints.toolBackends, '__KEY__'), sample)) {
    await t.test(rule.rule, () => rule.check());
  }
});
