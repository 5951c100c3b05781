"""python -m mqttbench.k6 bin: the path of this checkout's k6 build
(mqttbench/k6/command.py keys it by the extension's sources), for the shell."""

import sys

from .command import binary


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["bin"]:
        print(__doc__, file=sys.stderr)
        return 2
    print(binary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
