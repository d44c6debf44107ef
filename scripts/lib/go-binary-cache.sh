# Shared by the scripts that build the end-to-end tests' binaries from the Go module proxy:
# find Go, read a pinned version from a go.mod, and build a package once into a cache outside the
# repository (${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}/<name>-<version>), reusing it
# after. Changing the pin changes the file name, so the next run rebuilds. Build output goes to
# stderr; the last line on stdout is the absolute path of the binary.
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
  local name="$1" version="$2" mod_dir="$3" package="$4" ldflags="$5"
  local cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"
  local out="$cache_dir/$name-$version"
  if [[ -x "$out" && "${KEA_REBUILD:-0}" != "1" ]]; then
    echo "$out"
    return 0
  fi
  local go_cmd
  go_cmd="$(find_go "$name")"
  mkdir -p "$cache_dir"
  local tmp
  tmp="$(mktemp "$cache_dir/.$name-$version.XXXXXX")"
  # shellcheck disable=SC2064 # the path is fixed now, on purpose
  trap "rm -f '$tmp'" EXIT
  echo "$name: building $version with $("$go_cmd" version) (a cold build takes minutes)" >&2
  local start
  start=$(date +%s)
  (
    cd "$mod_dir"
    # Never fetch a different Go toolchain behind the caller's back; fail instead.
    export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
    export CGO_ENABLED=0
    "$go_cmd" build -trimpath -ldflags="$ldflags" -o "$tmp" "$package"
  )
  chmod 0755 "$tmp"
  mv -f "$tmp" "$out"
  trap - EXIT
  echo "$name: built $out in $(( $(date +%s) - start ))s" >&2
  echo "$out"
}
