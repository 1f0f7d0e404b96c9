import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { LocalLayoutRecognizer } from './lib/recognizer.js';
import { RenderPool } from './lib/render-pool.js';

const config = z
  .object({
    render_workers: z
      .number()
      .int()
      .min(1)
      .max(32)
      .default(2)
      .describe('Renditions and previews run in worker threads: how many at once (more wait their turn).'),
    render_timeout_seconds: z.number().positive().default(60).describe("How long one document's rendition and previews may take before its run fails."),
    render_memory_mb: z
      .number()
      .int()
      .min(64)
      .default(512)
      .describe('Heap ceiling of one render worker; a document that needs more fails its run, not the host.'),
  })
  .strict();

export default definePlugin({
  id: 'recognizer-local',
  sdk: '^1.13.0',
  config,
  register(env) {
    env.registerInit({
      deps: { recognizers: extensionPoints.documentRecognizers, lifecycle: coreServices.lifecycle },
      async init({ recognizers, lifecycle }, options) {
        const pool = new RenderPool({ workers: options.render_workers, memoryMb: options.render_memory_mb, timeoutMs: options.render_timeout_seconds * 1000 });
        lifecycle.onStop(() => pool.close());
        recognizers.register('local_layout', new LocalLayoutRecognizer(pool));
      },
    });
  },
});
