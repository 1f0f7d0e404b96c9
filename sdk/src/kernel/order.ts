import { PluginRefusedError } from '../errors.js';

/**
 * Orders plugins so each comes after those it depends on, keeping the
 * configured order where dependencies allow. Refuses missing dependencies and
 * cycles.
 */
export function dependencyOrder<P extends { id: string; dependsOn: readonly string[] }>(plugins: P[]): P[] {
  const byId = new Map(plugins.map((p) => [p.id, p]));
  for (const plugin of plugins) {
    for (const dep of plugin.dependsOn) {
      if (!byId.has(dep)) {
        throw new PluginRefusedError(plugin.id, 'missing_dependency', `depends on plugin "${dep}", which is not enabled or not installed`);
      }
    }
  }
  const ordered: P[] = [];
  const placed = new Set<string>();
  while (ordered.length < plugins.length) {
    const next = plugins.find((p) => !placed.has(p.id) && p.dependsOn.every((d) => placed.has(d)));
    if (!next) {
      const stuck = plugins.filter((p) => !placed.has(p.id)).map((p) => p.id);
      throw new PluginRefusedError(stuck[0]!, 'missing_dependency', `dependency cycle among plugins ${stuck.join(', ')}`);
    }
    ordered.push(next);
    placed.add(next.id);
  }
  return ordered;
}
