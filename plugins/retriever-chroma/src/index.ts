import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { ChromaRetriever } from './lib/chroma-retriever.js';

const config = z
  .object({
    url: z
      .union([z.literal(''), z.string().url()])
      .default('')
      .describe("URL of the Chroma server; empty uses the host's `[chroma].url` (`CHROMA_URL`)."),
  })
  .strict();

export default definePlugin({
  id: 'retriever-chroma',
  sdk: '^1.18.0',
  config,
  register(env) {
    env.registerInit({
      deps: { retrievers: extensionPoints.retrievers, hostConfig: coreServices.config, health: coreServices.health, http: coreServices.http },
      async init({ retrievers, hostConfig, health, http }, options) {
        const hostUrl = () => {
          const url = hostConfig.section('chroma')?.url;
          return typeof url === 'string' && url ? url : undefined;
        };
        const retriever = new ChromaRetriever({ url: () => options.url || hostUrl(), http });
        retrievers.register('chroma', retriever);
        // The client's own view of its server, shown per plugin by `GET /plugins` and in `/healthz`.
        health.register('server', () => retriever.health());
      },
    });
  },
});
