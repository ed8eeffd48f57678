# scripts/common.sh — shared helpers for setup.sh / test.sh / demo.sh (sourced, not run).

CALLSITE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The one list of Python versions: the host's (pyenv) and the chroot's (Debian sid builds that
# need a newer glibc than the host's; scripts/chroot.sh). A chroot version pyenv has runs on the host.
CALLSITE_HOST_MINORS=(3.10 3.11 3.12 3.13)
CALLSITE_CHROOT_MINORS=(3.14 3.15)
CALLSITE_SUPPORTED_MINORS=("${CALLSITE_HOST_MINORS[@]}")
CALLSITE_DEFAULT_MINOR=3.11
CALLSITE_REQUIREMENTS="$CALLSITE_ROOT/requirements"
# Caches shared by every checkout on the machine (CI's fresh clone included): chroots, peer venvs.
CALLSITE_CACHE="${CALLSITE_CACHE:-${CALLSITE_CHROOT_CACHE:-/var/cache/callsite}}"
PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}"

# Compiler cache for every build the scripts start (test venvs, peers' wheel, C++ suites,
# sanitized module): objects are keyed by their preprocessed source and flags, and paths under
# the checkout are made relative, so a fresh clone compiles only what differs from any earlier
# build on the machine. CMake reads the launcher from the environment when a build tree is
# first configured. CALLSITE_CCACHE=0 turns it off.
if [ "${CALLSITE_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_DIR="${CCACHE_DIR:-$CALLSITE_CACHE/ccache}" CCACHE_BASEDIR="$CALLSITE_ROOT"
  # The build directory is named in the debug info otherwise, which would keep two checkouts apart.
  export CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
fi

# callsite_install_packages PKG... : apt-get update + install, as root (sudo otherwise). The
# scripts run side by side (scripts/test.sh), so installs take turns on one lock of their own,
# and a dpkg lock held by anything else is waited for rather than failed on.
callsite_install_packages() {
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  local apt=(env DEBIAN_FRONTEND=noninteractive flock "${TMPDIR:-/tmp}/callsite-apt.lock"
             apt-get -o DPkg::Lock::Timeout=900 -qq)
  $sudo "${apt[@]}" update && $sudo "${apt[@]}" install -y "$@"
}

log() { printf '[callsite] %s\n' "$*" >&2; }
die() { printf '[callsite] error: %s\n' "$*" >&2; exit 1; }

# Prints every full version (3.X.Y) pyenv knows, one a line; falls back to $PYENV_ROOT/versions.
callsite_pyenv_versions() {
  {
    if command -v pyenv >/dev/null 2>&1; then pyenv versions --bare 2>/dev/null || true; fi
    if [ -d "$PYENV_ROOT/versions" ]; then ls -1 "$PYENV_ROOT/versions" 2>/dev/null || true; fi
  } | sed 's/^[* ]*//; s/ .*//' | grep -E '^3\.[0-9]+\.[0-9]+$' | sort -u -V
}

# usable_python EXE: true when EXE runs and can create a venv with pip in it.
callsite_usable_python() {
  [ -x "$1" ] && "$1" -c 'import venv, ensurepip' >/dev/null 2>&1
}

# Prints the interpreter path for minor version $1 (e.g. 3.11): the newest pyenv 3.11.* that
# runs, else `python3.11` on PATH. Returns 1 and prints the reason on stdout when there is none.
callsite_find_python() {
  local minor="$1" full exe best="" on_path
  for full in $(callsite_pyenv_versions | grep -E "^${minor//./\\.}\.[0-9]+$"); do
    exe="$PYENV_ROOT/versions/$full/bin/python$minor"
    [ -x "$exe" ] || exe="$PYENV_ROOT/versions/$full/bin/python3"
    if callsite_usable_python "$exe"; then best="$exe"; fi
  done
  if [ -z "$best" ]; then
    on_path="$(command -v "python$minor" 2>/dev/null || true)"
    if [ -n "$on_path" ] && callsite_usable_python "$on_path"; then
      # A venv's python (tox puts its environment's first on PATH) stands for the interpreter it
      # was made from: the cached venvs are keyed by the interpreter, the same from every checkout.
      best="$("$on_path" -c 'import os, sys; b = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
print(b if sys.prefix != sys.base_prefix and os.access(b, os.X_OK) else sys.executable)')"
    fi
  fi
  if [ -z "$best" ]; then
    if [ -n "${on_path:-}" ]; then
      echo "python$minor on PATH ($on_path) lacks venv/ensurepip (Debian: apt-get install python$minor-venv)"
    elif callsite_pyenv_versions | grep -qE "^${minor//./\\.}\."; then
      echo "pyenv has $minor but its interpreter does not run or lacks venv/ensurepip"
    else
      echo "no python$minor on PATH and none under pyenv ($PYENV_ROOT/versions)"
    fi
    return 1
  fi
  echo "$best"
}

# Prints why minor version $1 cannot be used (nothing, status 1, when it can).
callsite_skip_reason() {
  local m="$1" why
  if ! [[ "$m" =~ ^3\.([0-9]+)$ ]] || [ "${BASH_REMATCH[1]}" -lt 10 ]; then
    echo "unsupported (callsite needs CPython 3.10 or newer)"; return 0
  fi
  if why="$(callsite_find_python "$m")"; then return 1; fi
  echo "$why"
}

# Echoes the minors from the requested list ($@, default: all supported) that have an
# interpreter; prints "skipping Python X: reason" on stderr for every one that has none.
callsite_available_minors() {
  local want=("$@") m why
  [ ${#want[@]} -gt 0 ] || want=("${CALLSITE_SUPPORTED_MINORS[@]}")
  for m in "${want[@]}"; do
    if why="$(callsite_skip_reason "$m")"; then log "skipping Python $m: $why"; else echo "$m"; fi
  done
}

# callsite_requirements FILE... : the requirement lines of FILEs (comments and blanks dropped).
callsite_requirements() {
  sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' "$@"
}

# callsite_peer_minor NAME : the Python minor named by requirements/peers/NAME.txt's first line.
callsite_peer_minor() {
  sed -n '1s/^#[[:space:]]*python:[[:space:]]*\(3\.[0-9]*\).*/\1/p' "$CALLSITE_REQUIREMENTS/peers/$1.txt"
}

callsite_venv() { echo "$CALLSITE_ROOT/.venv/py$1"; }

