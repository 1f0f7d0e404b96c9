import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { parserRegistrations, UNSTRUCTURED_CONTENT_TYPES } from './lib/content-types.js';
import { UNSTRUCTURED_STRATEGIES } from './lib/local-content-types.js';
import { ParserPool } from './lib/parser-pool.js';

const config = z
  .object({
    unstructured_api_url: z
      .union([z.literal(''), z.string().url()])
      .default('')
      .describe(
        'Base URL of an Unstructured API (hosted or self-hosted; a trailing `/general/v0/general` is accepted). Empty: every document is parsed locally. Set: the Unstructured parser takes the content types of `unstructured_content_types`, the local parsers keep the rest.',
      ),
    unstructured_api_key_env: z
      .string()
      .min(1)
      .default('UNSTRUCTURED_API_KEY')
      .describe('Name of the environment variable holding the Unstructured API key, sent as `unstructured-api-key`; none is sent when it is unset.'),
    unstructured_strategy: z
      .enum(UNSTRUCTURED_STRATEGIES)
      .default('auto')
      .describe('Partition strategy: `auto`, `fast` (text layer only), `hi_res` (layout model and OCR), `ocr_only`, `od_only`, `vlm`.'),
    unstructured_content_types: z
      .array(z.string().min(1))
      .default(UNSTRUCTURED_CONTENT_TYPES)
      .describe('Content types sent to Unstructured when it is configured; they replace the local parser for those types.'),
    unstructured_timeout_seconds: z.number().positive().default(300).describe("How long one document's partition request may take."),
    parse_workers: z.number().int().min(1).max(32).default(2).describe('Local parses run in worker threads: how many at once (more wait their turn).'),
    parse_timeout_seconds: z.number().positive().default(120).describe('How long one local parse may run before its document fails.'),
    parse_memory_mb: z
      .number()
      .int()
      .min(64)
      .default(512)
      .describe('Heap ceiling of one parse worker; a parse that needs more fails its document, not the host.'),
    max_text_chars: z.number().int().positive().default(20_000_000).describe('Characters of text one document may produce.'),
    zip_max_entries: z.number().int().positive().default(10_000).describe('Files a DOCX (zip container) may hold.'),
    zip_max_uncompressed_mb: z.number().positive().default(200).describe('Bytes a DOCX may inflate to, all files together, in MB.'),
    zip_max_ratio: z
      .number()
      .positive()
      .default(100)
      .describe('Largest inflated/compressed ratio of one file over 1 MB inside a DOCX (ordinary ones stay under 30).'),
    csv_max_columns: z.number().int().positive().default(1_000).describe('Columns a CSV row may have.'),
    csv_max_header_chars: z
      .number()
      .int()
      .positive()
      .default(200)
      .describe("Column names longer than this are cut in each row's text (every row repeats them)."),
    pdf_max_pages: z.number().int().positive().default(5_000).describe('Pages a PDF may have.'),
    html_max_depth: z.number().int().positive().default(500).describe('How deeply HTML elements (also in DOCX and raw HTML in Markdown) may nest.'),
  })
  .strict();

export default definePlugin({
  id: 'parsers-local',
  sdk: '^1.14.0',
  config,
  register(env) {
    env.registerInit({
      deps: { parsers: extensionPoints.documentParsers, log: coreServices.logger, http: coreServices.http, lifecycle: coreServices.lifecycle },
      async init({ parsers, log, http, lifecycle }, options) {
        const pool = new ParserPool({
          workers: options.parse_workers,
          memoryMb: options.parse_memory_mb,
          timeoutMs: options.parse_timeout_seconds * 1000,
          limits: {
            maxTextChars: options.max_text_chars,
            zip: { maxEntries: options.zip_max_entries, maxUncompressedBytes: options.zip_max_uncompressed_mb * 1024 * 1024, maxRatio: options.zip_max_ratio },
            csvMaxColumns: options.csv_max_columns,
            csvMaxHeaderChars: options.csv_max_header_chars,
            pdfMaxPages: options.pdf_max_pages,
            htmlMaxDepth: options.html_max_depth,
          },
        });
        lifecycle.onStop(() => pool.close());
        // The Unstructured client loads only when an API is configured: most hosts never use it.
        const unstructuredOptions = options.unstructured_api_url
          ? {
              url: options.unstructured_api_url,
              apiKey: () => process.env[options.unstructured_api_key_env],
              strategy: options.unstructured_strategy,
              timeoutMs: options.unstructured_timeout_seconds * 1000,
              http,
            }
          : undefined;
        const unstructured = unstructuredOptions && {
          parser: new (await import('./lib/unstructured-parser.js')).UnstructuredParser(unstructuredOptions),
          contentTypes: options.unstructured_content_types,
        };
        for (const [contentType, parser] of parserRegistrations((contentType) => pool.parser(contentType), unstructured)) parsers.register(contentType, parser);
        if (unstructuredOptions)
          log.info({ url: unstructuredOptions.url, content_types: options.unstructured_content_types }, 'document parsing through the Unstructured API');
      },
    });
  },
});
