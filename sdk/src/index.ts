/**
 * `@agent-host/sdk`: the contract between agent-host and its plugins.
 * Plugins import only this package (and their own libraries).
 * @packageDocumentation
 */
export { z } from 'zod';
export * from './error-codes.js';
export * from './errors.js';
export * from './extensions/index.js';
export * from './grounding/index.js';
export type { PluginManifest } from './manifest.js';
export * from './plugin.js';
export * from './refs.js';
export * from './services/index.js';
export * from './validation.js';
