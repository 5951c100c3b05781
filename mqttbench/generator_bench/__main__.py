"""python -m mqttbench generator-bench [instances] [ARGS...]: the k6
extension's own figures (extension.py), or with `instances` a run split
over several k6 processes (instances.py); --help says the rest."""

import sys

from . import extension, instances


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["instances"]:
        return instances.main(argv[1:])
    return extension.main(argv)


if __name__ == "__main__":
    sys.exit(main())
