"""Runs this checkout's start-up hook (python/startup: callsite.pth) in child processes of the
tests when callsite is a development build (build/<dir>/pkg on PYTHONPATH, no site-packages
.pth of its own): tests/conftest.py puts this folder first on their PYTHONPATH. Where an
installed callsite's hook ran already, the .pth finds it imported and its work done."""
import os
import site

site.addsitedir(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "python", "startup"))
