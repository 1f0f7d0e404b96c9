import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { parserRegistrations, UNSTRUCTURED_CONTENT_TYPES } from './lib/content-types.js';
import { UnstructuredStrategy } from './lib/unstructured-parser.js';

const config = z
  .object({
    /** Base URL of an Unstructured API (hosted or self-hosted); empty parses everything locally. */
    unstructured_api_url: z.union([z.literal(''), z.string().url()]).default(''),
    /** Name of the environment variable holding the Unstructured API key (none is sent when it is unset). */
    unstructured_api_key_env: z.string().min(1).default('UNSTRUCTURED_API_KEY'),
    /** Partition strategy: `auto`, `fast` (text layer only), `hi_res` (layout model and OCR), `ocr_only`, `od_only`, `vlm`. */
    unstructured_strategy: z.enum(UnstructuredStrategy).default(UnstructuredStrategy.Auto),
    /** Content types sent to Unstructured when it is configured; they replace the local parser for those types. */
    unstructured_content_types: z.array(z.string().min(1)).default(UNSTRUCTURED_CONTENT_TYPES),
    /** How long one document's partition request may take. */
    unstructured_timeout_seconds: z.number().positive().default(300),
  })
  .strict();

export default definePlugin({
  id: 'parsers-local',
  sdk: '^1.0.0',
  config,
  register(env) {
    env.registerInit({
      deps: { parsers: extensionPoints.documentParsers, log: coreServices.logger, http: coreServices.http },
      async init({ parsers, log, http }, options) {
        const unstructured = options.unstructured_api_url
          ? {
              url: options.unstructured_api_url,
              apiKey: () => process.env[options.unstructured_api_key_env],
              strategy: options.unstructured_strategy,
              timeoutMs: options.unstructured_timeout_seconds * 1000,
              contentTypes: options.unstructured_content_types,
              http,
            }
          : undefined;
        for (const [contentType, parser] of parserRegistrations(unstructured)) parsers.register(contentType, parser);
        if (unstructured) log.info({ url: unstructured.url, content_types: unstructured.contentTypes }, 'document parsing through the Unstructured API');
      },
    });
  },
});
