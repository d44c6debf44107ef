#!/usr/bin/env bash
# Builds, in a directory, the exact file tree the Dockerfile's final stage puts under /app:
# package.json and package-lock.json, the production dependencies installed by `npm ci
# --omit=dev` (less type declarations and source maps), and the compiled output at dist/src and
# dist/native. It exists so the image's
# runtime tree can be exercised without a container engine (test/deploy/runtime-tree.test.ts);
# test/deploy checks that the tree it builds and the Dockerfile's COPY lines name the same paths.
#
# Usage: scripts/runtime-tree.sh DEST
#   DEST must not exist or be an empty directory.
#
# Environment:
#   KEA_BUILD_OUTPUT  the directory the TypeScript build emitted into, holding src/ and native/
#                     (default: the repository's dist/, as `npm run build` writes it)
#   NPM               npm command to use (default: npm)
set -euo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
  echo "usage: $0 DEST" >&2
  exit 2
fi

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$1"
build_output="${KEA_BUILD_OUTPUT:-$repo_root/dist}"
npm_cmd="${NPM:-npm}"

# The compiled directories the image carries, relative to the build output; the Dockerfile copies
# the same ones from the build stage's dist/.
compiled_dirs=(src native)

for dir in "${compiled_dirs[@]}"; do
  if [[ ! -d "$build_output/$dir" ]]; then
    echo "runtime-tree: $build_output/$dir is missing: build first (npm run build, or tsc -p tsconfig.build.json --outDir DIR with KEA_BUILD_OUTPUT=DIR)" >&2
    exit 1
  fi
done
if [[ ! -f "$build_output/src/main.js" ]]; then
  echo "runtime-tree: $build_output/src/main.js is missing: the build output is incomplete" >&2
  exit 1
fi

if [[ -e "$dest" ]] && [[ -n "$(ls -A "$dest")" ]]; then
  echo "runtime-tree: $dest exists and is not empty" >&2
  exit 1
fi
mkdir -p "$dest"

cp "$repo_root/package.json" "$repo_root/package-lock.json" "$dest/"

# As in the Dockerfile: production dependencies only, exactly as locked. Install scripts stay on
# (whatever a user's npmrc says) for the packages package.json's allowScripts approves: koffi's
# checks that its prebuilt binary loads, and builds one from source when it does not.
# --prefer-offline and the silenced audit/fund notices change nothing in the installed tree.
# Then the same pruning of type declarations and source maps, which nothing reads at run time.
(
  cd "$dest"
  "$npm_cmd" ci --omit=dev --ignore-scripts=false --no-audit --no-fund --prefer-offline >&2
  find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete
)

mkdir -p "$dest/dist"
for dir in "${compiled_dirs[@]}"; do
  cp -R "$build_output/$dir" "$dest/dist/$dir"
done

echo "$dest"
