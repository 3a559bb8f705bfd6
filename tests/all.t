#!/bin/sh
# prove entry point: `prove -v tests/all.t` (make test). prove hands this
# file to perl, which execs the interpreter of a non-perl #! line.
cd "$(dirname "$0")/.." || exit 1
exec python3 -m tools.runner.testrun "$@"
