#!/bin/sh
# Check a Promela model with spin: generate the verifier, compile it, run
# an exhaustive safety search (assertions and invalid end states) once per
# set of defines. Usage: spin_check.sh MODEL.pml [DEFINES ...]
# where each DEFINES is "" or e.g. "-DDISCARD", or "!-DBUG_X" for a
# deliberately broken model that the search must reject (a check that
# cannot fail proves nothing). Prints one line per run; exits non-zero if
# a run finds an error or does not finish the search, or if a "!" run
# finds no assertion violation.
set -u
model=$1
shift
[ $# -gt 0 ] || set -- ""
command -v spin >/dev/null 2>&1 || { echo "spin not installed (make deps)"; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$model" "$dir/model.pml"
status=0
for arg in "$@"; do
	defs=${arg#!}
	label=${defs:-default}
	out=$(cd "$dir" && rm -f pan pan.* && spin -a $defs model.pml 2>&1 &&
		gcc -O2 -DSAFETY -o pan pan.c 2>&1 &&
		./pan -m200000 2>&1)
	errs=$(printf '%s\n' "$out" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
	states=$(printf '%s\n' "$out" | sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p')
	if [ "$arg" != "$defs" ]; then
		if [ "${errs:-0}" != 0 ] && printf '%s\n' "$out" | grep -q "assertion violated"; then
			echo "$(basename "$model") $label (deliberate bug): caught"
		else
			echo "$(basename "$model") $label (deliberate bug): NOT caught"
			status=1
		fi
		continue
	fi
	if [ "$errs" = 0 ] && ! printf '%s\n' "$out" | grep -q "Search not completed\|depth too small"; then
		echo "$(basename "$model") $label: 0 errors, $states states"
	else
		echo "$(basename "$model") $label: FAILED"
		printf '%s\n' "$out" | grep -E "violated|error|not completed|too small" | head -5
		status=1
	fi
done
exit $status
