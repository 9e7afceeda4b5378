# Shared by scripts/run, scripts/test and bench/run: install what is missing, build.
# Sourced, not executed.

PI_SANDBOX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages by purpose.
PKGS_BUILD=(cmake ninja-build g++ pkg-config libseccomp-dev nlohmann-json3-dev libcli11-dev
            libssl-dev libgtest-dev libasio-dev libidn2-dev pandoc)
# The package (scripts/package): CPack's DEB generator reads the binary with file and
# dpkg-shlibdeps to compute Depends.
PKGS_PACKAGE=(dpkg-dev file)
PKGS_TEST=(git git-lfs tmux python3 python3-venv util-linux procps passwd curl iproute2
           openssh-client openssh-server gnupg man-db groff-base zsh fish
           docker.io apparmor)
PKGS_FUZZ=(clang-16 libc++-16-dev libc++abi-16-dev libclang-rt-16-dev)
PKGS_BENCH=(hyperfine bubblewrap)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# ensure_packages PKG...: installs the packages that are not installed yet (apt-get).
ensure_packages() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  log "installing missing packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
}

# build PRESET [TARGET...]: configures (once) and builds incrementally, showing the build
# tool's own progress on stderr (ninja's `[12/108] Building ...` lines); says nothing when
# everything is up to date.
build() {
  local preset="$1"
  shift
  local dir="$PI_SANDBOX_ROOT/build/$preset"
  if [ ! -f "$dir/build.ninja" ]; then
    log "configuring build/$preset (cmake --preset $preset)"
    cmake --preset "$preset" -S "$PI_SANDBOX_ROOT" >&2
  fi
  if ninja -C "$dir" -n "$@" 2>/dev/null | grep -q '^ninja: no work to do'; then return 0; fi
  log "building build/$preset${*:+ ($*)}"
  local targets=()
  local t
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$dir" "${targets[@]}" -- -k 0 >&2 || cmake --build "$dir" "${targets[@]}" >&2
}
