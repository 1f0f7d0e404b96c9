import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout or install root: `core/dist/paths.js` lives two levels below it. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const DEFAULT_CONFIG_DIR = path.join(PROJECT_ROOT, 'config');
export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations', 'dist');
export const FIRST_PARTY_PLUGINS_DIR = path.join(PROJECT_ROOT, 'plugins');
