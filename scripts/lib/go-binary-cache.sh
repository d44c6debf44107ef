# Shared by the scripts that build the end-to-end tests' binaries from the Go module proxy:
# find Go, read a pinned version from a go.mod, and build main packages once into a cache outside
# the repository (${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}/<name>-<version>), reusing them
# after. Changing the pin changes the file names, so the next run rebuilds. Build output goes to
# stderr; stdout has the absolute path of each binary, one a line.
#
# Environment:
#   KEA_CACHE_DIR   cache directory (default $HOME/.cache/kube-eviction-agent)
#   GO              go command to use (default: `go` on PATH, else /usr/local/go/bin/go)
#   KEA_REBUILD=1   build even if the cached binary exists

# The go command, or exit with a message naming the caller ($1).
find_go() {
  if [[ -n "${GO:-}" ]]; then
    echo "$GO"
  elif command -v go >/dev/null 2>&1; then
    echo go
  elif [[ -x /usr/local/go/bin/go ]]; then
    echo /usr/local/go/bin/go
  else
    echo "$1: no Go toolchain found (set GO=/path/to/go)" >&2
    exit 1
  fi
}

# The version go.mod ($2) requires of module $3, or exit with a message naming the caller ($1).
pinned_version() {
  local version
  version="$(awk -v mod="$3" '$1 == mod && $2 ~ /^v[0-9]/ { print $2; exit } $1 == "require" && $2 == mod { print $3; exit }' "$2")"
  if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "$1: cannot read the $3 version from $2 (got '$version')" >&2
    exit 1
  fi
  echo "$version"
}

# build_cached NAME VERSION MODULE_DIR PACKAGE LDFLAGS: prints the cached binary's path,
# building it first when it is not there (or KEA_REBUILD=1).
build_cached() {
  build_cached_set "$2" "$3" "$5" "$1=$4"
}

# build_cached_set VERSION MODULE_DIR LDFLAGS NAME=PACKAGE...: prints the cached path of each NAME,
# one a line in the order given, building the missing ones first (all of them with KEA_REBUILD=1)
# in a single `go build`, so that packages they share compile once and in parallel.
# Extra `go build` flags (e.g. -tags) may be given in GO_BUILD_FLAGS.
build_cached_set() {
  local version="$1" mod_dir="$2" ldflags="$3"
  shift 3
  local cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"
  local names=() packages=() missing=() missing_packages=() pair
  for pair in "$@"; do
    names+=("${pair%%=*}")
    packages+=("${pair#*=}")
  done
  local i
  for i in "${!names[@]}"; do
    if [[ ! -x "$cache_dir/${names[$i]}-$version" || "${KEA_REBUILD:-0}" == "1" ]]; then
      missing+=("${names[$i]}")
      missing_packages+=("${packages[$i]}")
    fi
  done
  if (( ${#missing[@]} > 0 )); then
    local go_cmd
    go_cmd="$(find_go "${missing[0]}")"
    mkdir -p "$cache_dir"
    local tmp
    tmp="$(mktemp -d "$cache_dir/.build-$version.XXXXXX")"
    # shellcheck disable=SC2064 # the path is fixed now, on purpose
    trap "rm -rf '$tmp'" EXIT
    echo "${missing[*]}: building $version with $("$go_cmd" version) (a cold build takes minutes)" >&2
    local start
    start=$(date +%s)
    # One package is built to a file, so that its binary's name need not be its directory's.
    local out_flag="$tmp/"
    (( ${#missing[@]} == 1 )) && out_flag="$tmp/${missing[0]}"
    (
      cd "$mod_dir"
      # Never fetch a different Go toolchain behind the caller's back; fail instead.
      export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
      export CGO_ENABLED=0
      # shellcheck disable=SC2086 # GO_BUILD_FLAGS is a list of flags
      "$go_cmd" build ${GO_BUILD_FLAGS:-} -trimpath -ldflags="$ldflags" -o "$out_flag" "${missing_packages[@]}"
    )
    for i in "${!missing[@]}"; do
      local built="$tmp/${missing[$i]}"
      if [[ ! -f "$built" ]]; then
        echo "${missing[$i]}: go build left no $built" >&2
        exit 1
      fi
      chmod 0755 "$built"
      mv -f "$built" "$cache_dir/${missing[$i]}-$version"
    done
    rm -rf "$tmp"
    trap - EXIT
    echo "${missing[*]}: built $version into $cache_dir in $(( $(date +%s) - start ))s" >&2
  fi
  for i in "${!names[@]}"; do
    echo "$cache_dir/${names[$i]}-$version"
  done
}
