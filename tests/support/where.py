"""Where the tests' files are: the tests/ folder and the checkout (every test file imports
these instead of counting parent folders)."""
from pathlib import Path

#: tests/
TESTS = Path(__file__).resolve().parent.parent
#: the checkout
REPO = TESTS.parent
#: tests/support/ (this folder: the helpers every area shares)
SUPPORT = TESTS / "support"
