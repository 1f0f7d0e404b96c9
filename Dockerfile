# agent-host for production: built in one stage, run as a non-root user in a slim second stage.
# Give it external Postgres, Chroma, MongoDB and S3 (see docker-compose.yml and docs/deployment.md).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY sdk ./sdk
COPY core ./core
COPY host ./host
COPY plugins ./plugins
COPY client ./client
COPY console ./console
COPY scripts ./scripts
COPY migrations ./migrations
RUN npm ci --no-audit --no-fund && node scripts/build.mjs && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production APP_ENV=production HOST=0.0.0.0 PORT=8080 LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app /app
COPY config ./config
RUN useradd --system --uid 10001 --home-dir /app agent-host && mkdir -p /app/data && chown agent-host /app/data
USER agent-host
EXPOSE 8080
# Readiness: the database, job store and vector store answer (GET /readyz).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--no-deprecation", "host/dist/cli.js", "start"]
