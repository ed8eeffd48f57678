"""callsite's PEP 517 build backend: scikit-build-core's, with a build folder per Python
environment.

scikit-build-core keeps its CMake build in ``build-dir`` so that a rebuild is incremental. A
folder named by the wheel tag alone is shared by every environment of one Python version (two
virtual environments, a pyenv and a system 3.11): two ``pip install .`` of one checkout at once
then configure and build in the same folder, each removing or rewriting the other's files (and
each reconfigures for its own interpreter, rebuilding everything, one after the other). Here
the folder is ``build/{wheel_tag}-<environment>``, <environment> naming the installing
interpreter's ``sys.prefix`` (its virtual environment), and a build holds a lock on its folder,
so two builds for one environment at once run one after the other. A ``build-dir`` given as a
config setting (``-C build-dir=...``) is used as given, with the same lock.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from scikit_build_core import build as _skbuild
from scikit_build_core.build import *  # noqa: F401,F403 - every hook scikit-build-core has

#: The setting scikit-build-core reads the build folder from (formatted by it: {wheel_tag}).
BUILD_DIR = "build-dir"
#: The folder of the locks, beside the build folders.
LOCKS = os.path.join("build", "locks")


def environment_key() -> str:
    """A short name of the installing environment: its interpreter's sys.prefix (a virtual
    environment's folder), resolved."""
    prefix = os.path.realpath(sys.prefix)
    return hashlib.sha256(prefix.encode("utf-8", "surrogateescape")).hexdigest()[:10]


def with_build_dir(config_settings: dict[str, Any] | None) -> dict[str, Any]:
    """The config settings with this environment's build folder, unless one is given."""
    settings = dict(config_settings or {})
    settings.setdefault(BUILD_DIR, f"build/{{wheel_tag}}-{environment_key()}")
    return settings


@contextlib.contextmanager
def locked(settings: dict[str, Any]) -> Iterator[None]:
    """Holds an exclusive lock named by the build folder setting while a build runs in it
    (fcntl: POSIX; elsewhere, no lock)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    os.makedirs(LOCKS, exist_ok=True)
    name = hashlib.sha256(str(settings[BUILD_DIR]).encode()).hexdigest()[:16]
    with open(os.path.join(LOCKS, name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    settings = with_build_dir(config_settings)
    with locked(settings):
        return _skbuild.build_wheel(wheel_directory, settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    settings = with_build_dir(config_settings)
    with locked(settings):
        return _skbuild.build_editable(wheel_directory, settings, metadata_directory)
