# scripts/common.sh — what the scripts share: the Python versions, finding their interpreters,
# the cached venvs (sourced, not run).

CALLSITE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The one list of Python versions: the host's (pyenv) and the chroot's (Debian sid builds that
# need a newer glibc than the host's; scripts/chroot.sh). A chroot version pyenv has runs on the host.
CALLSITE_HOST_MINORS=(3.10 3.11 3.12 3.13)
CALLSITE_CHROOT_MINORS=(3.14 3.15)
CALLSITE_DEFAULT_MINOR=3.11
CALLSITE_REQUIREMENTS="$CALLSITE_ROOT/requirements"
CALLSITE_LOGS="$CALLSITE_ROOT/build/logs"
# Caches shared by every checkout on the machine (CI's fresh clone included): chroots, peer venvs.
CALLSITE_CACHE="${CALLSITE_CACHE:-/var/cache/callsite}"
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
# The calling script's header comment: its usage.
callsite_usage() { sed -n '2,/^[^#]/{/^#/p}' "$0"; }

# callsite_pyenv_versions MINOR : the full versions (3.X.Y) of MINOR that pyenv has, oldest first.
callsite_pyenv_versions() {
  printf '%s\n' "$PYENV_ROOT/versions/$1".* | sed 's|.*/||' | grep -E "^${1//./\\.}\.[0-9]+$" | sort -V
}

# callsite_usable_python EXE : true when EXE runs and can create a venv with pip in it.
callsite_usable_python() { [ -x "$1" ] && "$1" -c 'import venv, ensurepip' >/dev/null 2>&1; }

# Prints the interpreter path for minor version $1 (e.g. 3.11): the newest pyenv 3.11.* that
# runs, else `python3.11` on PATH. Returns 1 and prints the reason on stdout when there is none.
callsite_find_python() {
  local minor="$1" full exe best="" on_path
  for full in $(callsite_pyenv_versions "$minor"); do
    exe="$PYENV_ROOT/versions/$full/bin/python$minor"
    if callsite_usable_python "$exe"; then best="$exe"; fi
  done
  on_path="$(command -v "python$minor" 2>/dev/null || true)"
  if [ -z "$best" ] && [ -n "$on_path" ] && callsite_usable_python "$on_path"; then
    # A venv's python (tox puts its environment's first on PATH) stands for the interpreter it
    # was made from: the cached venvs are keyed by the interpreter, the same from every checkout.
    best="$("$on_path" -c 'import os, sys; b = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
print(b if sys.prefix != sys.base_prefix and os.access(b, os.X_OK) else sys.executable)')"
  fi
  [ -z "$best" ] || { echo "$best"; return 0; }
  if [ -n "$on_path" ]; then
    echo "python$minor on PATH ($on_path) lacks venv/ensurepip (Debian: apt-get install python$minor-venv)"
  elif [ -n "$(callsite_pyenv_versions "$minor")" ]; then
    echo "pyenv has $minor but its interpreter does not run or lacks venv/ensurepip"
  else
    echo "no python$minor on PATH and none under pyenv ($PYENV_ROOT/versions)"
  fi
  return 1
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

# callsite_requirements FILE... : the requirement lines of FILEs (comments and blanks dropped).
callsite_requirements() { sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' "$@"; }

callsite_venv() { echo "$CALLSITE_ROOT/.venv/py$1"; }

# callsite_pip_install VENV FILE... : installs the requirements of FILEs into VENV.
callsite_pip_install() {
  local f reqs=()
  for f in "${@:2}"; do reqs+=(-r "$f"); done
  "$1/bin/python" -m pip install --disable-pip-version-check -q "${reqs[@]}"
}

# callsite_pip_error < LOG : the first error pip wrote, the reason a failure is recorded with.
callsite_pip_error() {
  local r; r="$(grep -m 1 -E '^ERROR' | cut -c1-200)"
  echo "${r:-pip exited non-zero}"
}

# callsite_cached_venv NAME PYTHON INSTALL FILE... : prints $CALLSITE_CACHE/venv/NAME-KEY, a venv
# of PYTHON's into which `INSTALL VENV FILE...` installed, shared by every checkout on the
# machine (a CI clone too). KEY hashes all that makes it: the interpreter, FILEs' text and the
# code of INSTALL, of its helpers (functions named INSTALL*) and of this function, so changing
# any of them makes a new venv. One creator at a time per key (flock); a half-made venv is never
# marked ready. INSTALL's output goes to build/logs/pip-NAME.log, whose end is shown when it
# fails. CALLSITE_SETUP_RETRY=1 runs INSTALL again on a ready venv, for what it tolerated failing.
callsite_cached_venv() {
  local name="$1" base="$2" install="$3" f key dir; shift 3
  local cache="$CALLSITE_CACHE/venv" logf="$CALLSITE_LOGS/pip-$name.log"
  key="$( { "$base" -c 'import sys; print(sys.executable, sys.version)' && cat "$@" &&
            for f in callsite_cached_venv $(compgen -A function "$install"); do declare -f "$f"; done
          } | sha256sum | cut -c1-12)" || return 1
  dir="$cache/$name-$key"
  mkdir -p "$cache" "$CALLSITE_LOGS" || return 1
  (
    flock 8
    if [ -f "$dir/.callsite-ready" ]; then
      [ "${CALLSITE_SETUP_RETRY:-0}" = 1 ] || exit 0
      log "$name: retrying its install in $dir (log: ${logf#"$CALLSITE_ROOT"/})"
      "$install" "$dir" "$@" >>"$logf" 2>&1 </dev/null
      exit 0
    fi
    local t0=$SECONDS
    log "$name: installing ${*##*/} into $dir (log: ${logf#"$CALLSITE_ROOT"/})"
    rm -rf "$dir"
    if ! { "$base" -m venv "$dir" && "$install" "$dir" "$@"; } >"$logf" 2>&1 </dev/null; then
      tail -n 20 "$logf" >&2; rm -rf "$dir"; exit 1
    fi
    touch "$dir/.callsite-ready"
    log "$name: installed in $((SECONDS - t0)) s"
  ) 8>"$cache/.lock-$name-$key" || return 1
  # Keys nobody has used for a week belong to what the venv was made of before.
  find "$cache" -mindepth 1 -maxdepth 1 -name "$name-????????????" ! -name "$name-$key" \
    -mtime +7 -exec rm -rf {} + 2>/dev/null || true
  touch "$dir"
  echo "$dir"
}

# callsite_linked_venv SRC DST : makes DST a copy of venv SRC whose files are hard links into
# SRC, unless it already is one that runs (CALLSITE_SETUP_RETRY=1 copies again: a retry may have
# added to SRC). The scripts naming SRC's path (bin/ shebangs, activate, pyvenv.cfg) are
# rewritten by sed -i, which writes a new file, so SRC's own copies stay as they are; pip and
# Python's bytecode writes also replace files rather than write into them.
callsite_linked_venv() {
  local src="$1" dst="$2"
  if [ "$(cat "$dst/.callsite-deps" 2>/dev/null)" = "$src" ] && "$dst/bin/python" -c '' 2>/dev/null &&
     [ "${CALLSITE_SETUP_RETRY:-0}" != 1 ]; then return 0; fi
  log "$dst from $src"
  rm -rf "$dst" "$dst.partial"; mkdir -p "$(dirname "$dst")"
  cp -al "$src" "$dst.partial" 2>/dev/null || cp -a "$src" "$dst.partial" || return 1
  grep -lIF --null "$src" "$dst.partial"/bin/* "$dst.partial/pyvenv.cfg" 2>/dev/null |
    xargs -0 -r sed -i "s|$src|$dst|g"
  rm -f "$dst.partial/.callsite-ready"
  echo "$src" >"$dst.partial/.callsite-deps"
  mv "$dst.partial" "$dst"
}

# callsite_install_checkout VENV BUILD_DIR LOG : builds this checkout's callsite in BUILD_DIR
# (incremental; a path under the checkout) and installs it into VENV, appending to LOG.
callsite_install_checkout() {
  log "building callsite into $1 (log: ${3#"$CALLSITE_ROOT"/})"
  if ! (cd "$CALLSITE_ROOT" && CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        "$1/bin/python" -m pip install --disable-pip-version-check --no-build-isolation --no-deps \
        --force-reinstall -C "build-dir=$2" .) >>"$3" 2>&1 </dev/null; then
    tail -n 40 "$3" >&2; return 1
  fi
}

