// @agent-host/sdk/kernel: the rules of a plugin's life (dependency order, one init, config, deps, keyed
// registries, the manifest held to what was registered), shared by the host's kernel and `startTestKernel`, so a
// plugin's own tests refuse what the host would refuse. Internal: plugins do not import it.
export { dependencyOrder } from './order.js';
export { KeyedRegistry } from './registry.js';
export {
  buildServices,
  checkContributions,
  CONFIG_DEPENDENT_KEYS,
  declaredParts,
  runInit,
  runLifecycleHook,
  validatedConfig,
  withServiceProviders,
  type PluginParts,
} from './plugin-init.js';
