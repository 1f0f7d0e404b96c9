import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { createS3Clients } from './lib/s3-clients.js';
import { createS3ObjectStore } from './lib/s3-object-store.js';

const httpUrl = z.string().refine((v) => v === '' || /^https?:\/\/[^/]/.test(v), 'must be empty or an http(s) URL');

const config = z
  .object({
    endpoint: httpUrl.default('').describe('S3 API endpoint the host uses, for example `http://minio:9000`; empty means AWS S3 in `region`.'),
    region: z.string().min(1).default('us-east-1').describe('Region the requests are signed for.'),
    bucket: z.string().min(1).describe('The bucket holding every object; it must exist.'),
    access_key_id_env: z
      .string()
      .min(1)
      .default('AWS_ACCESS_KEY_ID')
      .describe(
        'Name of the environment variable holding the access key id (keys never sit in config files). Set both variables or neither: then the AWS default credential chain applies (instance role, shared config, ...).',
      ),
    secret_access_key_env: z.string().min(1).default('AWS_SECRET_ACCESS_KEY').describe('Name of the environment variable holding the secret access key.'),
    force_path_style: z
      .boolean()
      .default(false)
      .describe('Address buckets as `<endpoint>/<bucket>` rather than `<bucket>.<endpoint>` (MinIO and most S3-compatible servers).'),
    presign_ttl_seconds: z.number().int().min(1).max(604_800).default(900).describe('Lifetime of a presigned download URL (S3 allows at most 7 days).'),
  })
  .strict();

export default definePlugin({
  id: 'object-store-s3',
  sdk: '^1.1.0',
  config,
  register(env) {
    env.registerInit({
      deps: {
        objectStores: extensionPoints.objectStores,
        hostConfig: coreServices.config,
        lifecycle: coreServices.lifecycle,
        log: coreServices.logger,
        http: coreServices.http,
      },
      async init({ objectStores, hostConfig, lifecycle, log, http }, options) {
        const publicEndpoint = String(hostConfig.section('object_store')?.public_endpoint ?? ''); // OBJECT_STORE_PUBLIC_ENDPOINT
        const { client, publicClient } = createS3Clients(
          {
            endpoint: options.endpoint,
            region: options.region,
            forcePathStyle: options.force_path_style,
            accessKeyIdEnv: options.access_key_id_env,
            secretAccessKeyEnv: options.secret_access_key_env,
          },
          publicEndpoint,
          process.env,
          http,
        );
        objectStores.register('s3', createS3ObjectStore({ client, publicClient, bucket: options.bucket, presignTtlSeconds: options.presign_ttl_seconds, log }));
        lifecycle.onStop(() => {
          client.destroy();
          publicClient?.destroy();
        });
      },
    });
  },
});
