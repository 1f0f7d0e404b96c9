import type { Logger } from '@agent-host/sdk';
import { ensurePipTool, type PipTool } from '../process/pip-venv.js';

const chromaTool = (version: string): PipTool => ({
  name: `chroma-${version}`,
  requirement: `chromadb==${version}`,
  bin: 'chroma',
  missingPython:
    'the embedded Chroma is installed with Python 3 and its venv module; install them, set [chroma] python (AGENT_HOST__CHROMA__PYTHON), or set CHROMA_URL to a Chroma server',
});

/** Installs the Chroma server (`chromadb==<version>`) into its venv under the cache, once. */
export const ensureChromaVenv = (options: { cacheDir: string; version: string; python: string; logger: Logger }): Promise<string> =>
  ensurePipTool(chromaTool(options.version), options);
