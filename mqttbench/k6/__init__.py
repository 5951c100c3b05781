"""k6 runs: the one place a k6 command line is built (command.py), and the
build of this checkout that runs them."""
