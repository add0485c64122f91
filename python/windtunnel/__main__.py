"""`python -m windtunnel ARGS`: windtunnel's command-line tool (the same as the `windtunnel`
binary built by cargo), for machines that installed only the wheel."""

import sys

from windtunnel import _native

if __name__ == "__main__":
    sys.exit(_native.main(["windtunnel", *sys.argv[1:]]))
