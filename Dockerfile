# syntax=docker/dockerfile:1
# Build stage: compiles the server and console; better-sqlite3 13 ships prebuilt for Node 22 and later.
FROM node:22-bookworm AS build
WORKDIR /app
# All sources first: npm ci runs the package's prepare script, which builds the console.
COPY . .
RUN npm ci
# The runtime is Node 22: the optional better-sqlite3 build for Node 20 is not needed there.
RUN npm run build && npm prune --omit=dev --omit=optional

# Runtime stage: production dependencies and dist/.
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    TOLLROUTE_DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=64", "dist/main.js", "serve"]
