# syntax=docker/dockerfile:1
#
# The kube-eviction-agent image: a build stage that compiles the TypeScript, and a runtime stage
# holding only the compiled output and the production dependencies. deploy/daemonset.yaml runs it.
#
# scripts/runtime-tree.sh builds the same /app tree outside a container engine, and
# test/deploy/runtime-tree.test.ts checks that the two stay in step: change the final stage's
# COPY or `npm ci` lines and the script together.
#
#   docker build -t kube-eviction-agent:0.1.0 .

FROM node:24.22.3-bookworm-slim AS build
WORKDIR /src
# Dependencies first, so a source change does not re-run the install.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY native ./native
# The build bundles the parts of the Kubernetes client the agent uses (src/kube/client-node-parts.ts).
COPY scripts/bundle-client-library.ts ./scripts/
RUN npm run build

FROM node:24.22.3-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# koffi's native library comes prebuilt inside its npm packages, so no compiler is needed here;
# package.json's allowScripts lets koffi's install script check that it loads.
# Type declarations and source maps are never read at run time; dropping them takes about a third
# off node_modules. npm itself is removed afterwards: the agent never runs it, and it is the
# largest thing left in the image that the agent does not use.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts=false --no-audit --no-fund \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete \
 && npm cache clean --force \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/bin/npm /usr/local/bin/npx \
    /usr/local/lib/node_modules/corepack /usr/local/bin/corepack /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg /root/.npm
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/dist/native ./dist/native

# The agent runs as root, and cannot do otherwise: it registers memory thresholds by writing the
# host's cgroup.event_control, reads every pod's cgroup, and signals other containers' processes.
# The DaemonSet runs it with the host's PID namespace, not privileged: every capability dropped but
# KILL and DAC_READ_SEARCH, no-new-privs, the runtime's default seccomp profile and a read-only root
# filesystem (docs/deployment.md); privileged is the documented fallback for hosts whose security
# modules refuse even that.
USER root

# Kubernetes ignores HEALTHCHECK (the DaemonSet has its own probes); this serves `docker run`.
# Slim images have no curl, so node asks. It asks the probe listener (the default
# `server.probePort`), as the DaemonSet's probes do: its connection limit is its own, so clients of
# the metrics port cannot use it up. Set KEA_HEALTHCHECK_URL when the configuration moves it.
# scripts/build-image.sh writes the same HEALTHCHECK into the image it builds without an engine.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const u=process.env.KEA_HEALTHCHECK_URL||'http://127.0.0.1:8081/healthz';require('http').get(u,{timeout:3000},(r)=>{r.resume();process.exit(r.statusCode===200?0:1)}).on('timeout',()=>process.exit(1)).on('error',()=>process.exit(1))"]

# A young generation of 2 MiB semi-spaces instead of V8's 16 MiB: the agent's garbage is small and
# short-lived, and with the default the start-up's (loading modules, the first list of pods) took
# the idle agent to a peak of 99 MiB RSS, against 90 MiB with this; the idle CPU fell with it, and
# the memory shortcut's reaction did not measurably slow in side-by-side runs (docs/benchmarks.md,
# part 4).
# bench/parts/footprint.ts starts `run` with these same options.
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/dist/src/main.js"]
CMD ["run", "--config", "/etc/kube-eviction-agent/config.yaml"]
