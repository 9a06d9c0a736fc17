# One image recipe for both services: --build-arg SERVICE=processor|scanner (and HTTP_PORT,
# 8080 for the processor, 8081 for the scanner). Multi-stage: build with pnpm in the full image,
# ship only the service's compiled JS and production dependencies in the slim one. Base images
# default to the official node:22 images; scripts/images.sh passes local equivalents where no
# registry can be pulled.
ARG BUILD_IMAGE=node:22-bookworm
ARG RUNTIME_IMAGE=node:22-bookworm-slim

FROM ${BUILD_IMAGE} AS build
ARG PNPM_VERSION=10.34.9
RUN command -v pnpm >/dev/null || npm install -g pnpm@${PNPM_VERSION}
WORKDIR /src
# Manifests first, so the dependency layer is reused while only sources change.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json tsconfig.json ./
# The kafkajs patch (pnpm.patchedDependencies) must be there before the install applies it.
COPY patches patches
COPY packages/rules/package.json packages/rules/
COPY packages/contracts/package.json packages/contracts/
COPY packages/domain/package.json packages/domain/
COPY packages/accounts/package.json packages/accounts/
COPY packages/store/package.json packages/store/
COPY packages/kafka-runtime/package.json packages/kafka-runtime/
COPY packages/schedule/package.json packages/schedule/
COPY packages/testkit/package.json packages/testkit/
COPY packages/service-kit/package.json packages/service-kit/
COPY services/processor/package.json services/processor/
COPY services/scanner/package.json services/scanner/
# Workspace projects too (the lockfile lists them), though no image installs or builds them.
COPY bench/package.json bench/
COPY tools/demo-seed/package.json tools/demo-seed/
# Both services' dependencies in one layer, so the two images share it (better-sqlite3 is
# compiled once where no prebuilt binary can be downloaded). SERVICE is declared after it.
RUN pnpm install --frozen-lockfile --filter "@state-relay/processor..." --filter "@state-relay/scanner..." --reporter=silent
ARG SERVICE=processor
COPY packages packages
COPY services/${SERVICE} services/${SERVICE}
RUN pnpm exec tsc -b services/${SERVICE} \
 && pnpm --filter "@state-relay/${SERVICE}" deploy --prod --legacy /out --reporter=silent \
 && rm -rf /out/src /out/test /out/tsconfig.json

FROM ${RUNTIME_IMAGE}
ARG HTTP_PORT=8080
ENV NODE_ENV=production STATE_DIR=/data HTTP_PORT=${HTTP_PORT}
WORKDIR /app
COPY --from=build /out /app
# A non-root user owns the state directory; a fresh named volume inherits that ownership.
RUN mkdir -p /data && chown -R 10001:10001 /data
USER 10001
VOLUME ["/data"]
EXPOSE ${HTTP_PORT}
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.HTTP_PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node handles SIGTERM itself: finish or abort the open transaction, close the stores.
CMD ["node", "dist/server.js"]
