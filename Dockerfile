# syntax=docker/dockerfile:1
# Multi-stage image on the official Bun base. The role comes from ROLE (all | api | worker).
# The commands are the ones CI runs: `bun install --frozen-lockfile`, then `bun run start`.

FROM oven/bun:1.4 AS deps
WORKDIR /app
COPY package.json bun.lock ./
# patches/: a one-line fix to postgres.js applied by bun install (docs/decisions.md)
COPY patches ./patches
RUN bun install --frozen-lockfile

FROM oven/bun:1.4 AS check
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN bunx tsc --noEmit -p tsconfig.json && touch /app/.typechecked

FROM oven/bun:1.4-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production \
    ROLE=all \
    PORT=3000 \
    DATA_DIR=/data \
    LOG_LEVEL=info \
    MIMALLOC_PURGE_DELAY=-1
COPY --from=deps /app/node_modules ./node_modules
# depending on the check stage makes BuildKit run the typecheck for every image
COPY --from=check /app/.typechecked ./.typechecked
COPY package.json bun.lock tsconfig.json ./
COPY src ./src
COPY db ./db
COPY docs ./docs
COPY fixtures ./fixtures
COPY scripts/healthcheck.ts ./scripts/healthcheck.ts
RUN mkdir -p /data && chown -R bun:bun /data
USER bun
EXPOSE 3000
VOLUME ["/data"]
# api/all: GET /readyz on PORT; worker: GET /metrics on METRICS_PORT (set it for workers)
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 CMD ["bun", "run", "scripts/healthcheck.ts"]
STOPSIGNAL SIGTERM
CMD ["bun", "run", "start"]
