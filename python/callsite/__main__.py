"""``python -m callsite``: runs the command line, callsite._cli.main (a private subpackage)."""
import sys

from ._cli.main import main

if __name__ == "__main__":
    sys.exit(main())
