import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { FeatureHashingEmbedder } from './lib/feature-hashing.js';
import { OpenAiEmbedder } from './lib/openai-embedder.js';

const config = z
  .object({
    feature_hashing_dim: z
      .number()
      .int()
      .min(16)
      .max(65536)
      .default(512)
      .describe('Vector length of the `feature-hashing` embedder; changing it means re-indexing what it embedded.'),
    openai_base_url: z
      .string()
      .url()
      .default('https://api.openai.com/v1')
      .describe('Base URL of the OpenAI-compatible API (the embedder posts to `<base_url>/embeddings`).'),
    openai_model: z.string().min(1).default('text-embedding-3-small').describe('Embedding model name sent with each request.'),
    openai_dim: z
      .number()
      .int()
      .positive()
      .default(1536)
      .describe('Vector length the model returns (1536 for text-embedding-3-small); vectors of another length are refused.'),
    openai_send_dimensions: z.boolean().default(false).describe('Also send `dimensions: openai_dim`, for models that can shorten their vectors.'),
    openai_api_key_env: z
      .string()
      .min(1)
      .default('OPENAI_API_KEY')
      .describe(
        'Name of the environment variable holding the API key (the key itself never sits in config files); no `Authorization` header when it is unset.',
      ),
    openai_batch_size: z.number().int().min(1).max(2048).default(64).describe('Texts per request.'),
    openai_timeout_seconds: z.number().positive().default(60).describe('Deadline of one embeddings request, reading the answer included.'),
    openai_max_retries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(2)
      .describe('Further tries of a request answered 429 or 5xx (waiting `retry-after` up to 10 s, else 0.5 s doubling).'),
  })
  .strict();

export default definePlugin({
  id: 'embedders',
  sdk: '^1.0.0',
  config,
  register(env) {
    env.registerInit({
      deps: { embedders: extensionPoints.embedders, log: coreServices.logger, http: coreServices.http },
      async init({ embedders, log, http }, options) {
        embedders.register('feature-hashing', new FeatureHashingEmbedder(options.feature_hashing_dim));
        embedders.register(
          'openai',
          new OpenAiEmbedder({
            baseUrl: options.openai_base_url,
            model: options.openai_model,
            dim: options.openai_dim,
            sendDimensions: options.openai_send_dimensions,
            apiKey: () => process.env[options.openai_api_key_env],
            apiKeyEnv: options.openai_api_key_env,
            batchSize: options.openai_batch_size,
            timeoutMs: options.openai_timeout_seconds * 1000,
            maxRetries: options.openai_max_retries,
            http,
            log,
          }),
        );
      },
    });
  },
});
