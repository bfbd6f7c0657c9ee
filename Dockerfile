# syntax=docker/dockerfile:1
# The istiod-ts production image: Node 20 slim, production dependencies only, non-root.
# Build:  docker build -t <hub>/istiod-ts:<tag> .
# The Helm chart (charts/istiod) runs it with `serve` flags and a read-only root filesystem.

# 1. Compile TypeScript with the dev dependencies. Only src/ is compiled: tests and benchmarks
#    are not part of the image. The status page's browser script has its own tsconfig (DOM, not
#    Node), as in `npm run build`.
FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN printf '{"extends":"./tsconfig.json","include":["src"],"compilerOptions":{"incremental":false,"sourceMap":false}}' > tsconfig.image.json \
 && npx tsc -p tsconfig.image.json \
 && npx tsc -p src/server/ui/tsconfig.json

# 2. Production dependencies alone, in a clean tree.
FROM node:20-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. The runtime image.
FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY package.json ./
COPY bin ./bin
COPY proto ./proto
# uid/gid 1337 as Istio's images use; the chart's securityContext runs as the same ids.
RUN groupadd --system --gid 1337 istiod \
 && useradd --system --uid 1337 --gid 1337 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin istiod \
 && chmod 0755 /app/bin/istiod-ts.js \
 && ln -s /app/bin/istiod-ts.js /usr/local/bin/istiod-ts
USER 1337:1337
# From /, the relative defaults resolve as istiod's do: ./etc/cacerts is /etc/cacerts and
# ./etc/istio/config/mesh is /etc/istio/config/mesh.
WORKDIR /
EXPOSE 8080 15010 15012 15014 15017
ENTRYPOINT ["istiod-ts"]
CMD ["serve"]
