import type { HostConfig } from '../config/schema.js';

const orNull = (value: string) => (value.trim() === '' ? null : value);

/**
 * `GET /release-metadata` (spec 4.1): commit facts outside production, tag
 * facts in production; `release_identifier` falls back to
 * `OBSERVABILITY_RELEASE` when the sha (or tag) is unset.
 */
export function releaseMetadata(config: HostConfig) {
  const { release } = config;
  const fallback = orNull(release.observability_release);
  if (config.app.env === 'production') {
    return {
      app_env: config.app.env,
      release_identifier: orNull(release.tag_name) ?? fallback,
      tag_name: orNull(release.tag_name),
      tag_message: orNull(release.tag_message),
    };
  }
  return {
    app_env: config.app.env,
    release_identifier: orNull(release.commit_sha) ?? fallback,
    published_at: orNull(release.published_at),
    commit_sha: orNull(release.commit_sha),
    commit_subject: orNull(release.commit_subject),
  };
}
