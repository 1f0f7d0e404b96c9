import { S3Client } from '@aws-sdk/client-s3';
import { FetchHttpHandler } from '@smithy/fetch-http-handler';
import type { HttpClient } from '@agent-host/sdk';

export interface S3ConnectionOptions {
  /** S3 API endpoint the host uses; empty: AWS S3 in `region`. */
  endpoint: string;
  region: string;
  forcePathStyle: boolean;
  /** Names of the environment variables holding the access key pair. */
  accessKeyIdEnv: string;
  secretAccessKeyEnv: string;
}

/**
 * The access key pair from the named environment variables; when neither is
 * set, `undefined` lets the AWS SDK's default chain (instance role, shared
 * config...) find credentials. One without the other is a mistake, refused.
 */
export function credentialsFromEnv(options: S3ConnectionOptions, env: NodeJS.ProcessEnv) {
  const accessKeyId = env[options.accessKeyIdEnv]?.trim();
  const secretAccessKey = env[options.secretAccessKeyEnv]?.trim();
  if (!accessKeyId && !secretAccessKey) return undefined;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(`set both ${options.accessKeyIdEnv} and ${options.secretAccessKeyEnv}, or neither (then the AWS default credential chain applies)`);
  }
  return { accessKeyId, secretAccessKey };
}

/**
 * The SDK's requests go through the host's HTTP client: the SDK hands over a whole `Request` (signed, its signal
 * carrying the SDK's abort), taken apart here, its body streamed; the host's default deadline does not apply
 * (transfers stream).
 */
function hostRequestHandler(http: HttpClient): FetchHttpHandler {
  return new FetchHttpHandler({
    customFetch: ((request: Request) =>
      http.fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
        timeoutMs: Infinity,
        ...(request.body && { duplex: 'half' }),
      })) as typeof fetch,
  });
}

/**
 * One client for the endpoint the host reaches and, when a public endpoint is
 * set, one that signs download URLs for it (the signature covers the host
 * name, so it must be the one clients will use).
 */
export function createS3Clients(
  options: S3ConnectionOptions,
  publicEndpoint: string,
  env: NodeJS.ProcessEnv,
  http: HttpClient,
): { client: S3Client; publicClient?: S3Client } {
  const credentials = credentialsFromEnv(options, env);
  const clientFor = (endpoint: string) =>
    new S3Client({
      ...(endpoint && { endpoint }),
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(credentials && { credentials }),
      requestHandler: hostRequestHandler(http),
      // Many S3-compatible servers reject the flexible checksums the SDK now sends by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  return { client: clientFor(options.endpoint), ...(publicEndpoint && { publicClient: clientFor(publicEndpoint) }) };
}
