#!/usr/bin/env bash
# Runs every Go native fuzz target of the module, one after another, each for
# FUZZTIME (default 3s), and fails at the end if any failed.
#
#   FUZZTIME=30s FUZZ='^FuzzProviderID$' bash hack/fuzz.sh
#
# FUZZ is an extended regexp matched against the target names (default: all).
# Targets are found by grep (func FuzzXxx(f *testing.F) in *_test.go), not by
# `go test -list`, which would compile every package. go test -fuzz runs one
# target per invocation, so each target is its own run; a crasher is written
# to <package>/testdata/fuzz/<Name>/<hash>, where `go test` replays it from
# then on: fix the bug and commit that file as the regression test.
#
# FUZZPARALLEL sets go test's -parallel (fuzzing workers; default GOMAXPROCS).
# The test binaries are cached, so a second run skips the builds.
set -uo pipefail

cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-3s}
filter=${FUZZ:-.}
go=${GO:-go}
parallel=()
if [[ -n ${FUZZPARALLEL:-} ]]; then parallel=(-parallel "$FUZZPARALLEL"); fi

# Every "<dir> <Name>" pair, sorted. hack/ is a module of its own and bin/
# holds tools, so neither is searched.
mapfile -t targets < <(
	grep -rEo --include='*_test.go' --exclude-dir=hack --exclude-dir=bin --exclude-dir=.git \
		'^func Fuzz[A-Za-z0-9_]*\(' . |
		sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#; s#^\./[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#. \1#' |
		sort -u
)

# flaked reports whether a failed run's log is only Go 1.26's coordinator
# race (go.dev/issue/75804, fixed in Go 1.27): the fuzzing context's
# deadline escaping as "context deadline exceeded" when -fuzztime runs out
# on a busy machine, with no failing input written and no test failing.
flaked() {
	grep -q '^    context deadline exceeded$' "$1" &&
		! grep -q -e 'Failing input written' -e 'panic:' -e '^        ' "$1"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
ran=0
failed=()
start=$SECONDS
for t in "${targets[@]}"; do
	dir=${t% *}
	name=${t#* }
	[[ $name =~ $filter ]] || continue
	ran=$((ran + 1))
	t0=$SECONDS
	if "$go" test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "${parallel[@]}" "./$dir" >"$log" 2>&1; then
		printf '%-4s %-34s %-40s %4ds\n' ok "$name" "./$dir" $((SECONDS - t0))
		continue
	fi
	if flaked "$log"; then
		printf '%-4s %-34s %-40s %4ds  (go#75804: deadline race at the end of -fuzztime, no failing input)\n' ok "$name" "./$dir" $((SECONDS - t0))
		continue
	fi
	printf '%-4s %-34s %-40s %4ds\n' FAIL "$name" "./$dir" $((SECONDS - t0))
	failed+=("$name ./$dir")
	# The failure, and where go test wrote the crasher (relative to the package).
	if first=$(grep -m 1 -n -e '--- FAIL' "$log" | cut -d: -f1) && [[ -n $first ]]; then
		tail -n "+$first" "$log" | head -n 30 | sed 's/^/     /'
	else # no test ran: a build error, or a panic before fuzzing
		tail -n 20 "$log" | sed 's/^/     /'
	fi
	if crasher=$(grep -Eo 'testdata/fuzz/[^ ]+' "$log" | head -n 1) && [[ -n $crasher ]]; then
		echo "     crasher: $dir/$crasher (replay: go test -run='^${name}\$/$(basename "$crasher")\$' ./$dir)"
	fi
done

if ((ran == 0)); then
	echo "fuzz: no target matches FUZZ=$filter" >&2
	exit 1
fi
echo "fuzz: $ran targets, ${#failed[@]} failed, $((SECONDS - start))s"
if ((${#failed[@]} > 0)); then
	printf 'FAIL %s\n' "${failed[@]}" >&2
	exit 1
fi
