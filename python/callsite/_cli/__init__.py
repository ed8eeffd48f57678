"""The command line, ``python -m callsite``: loaded by the command and callsite.doctor() only."""
