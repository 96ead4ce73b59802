#!/usr/bin/env bash
# Runs every Go native fuzz target of the module, each for FUZZTIME (default
# 3s), FUZZJOBS at a time, and fails at the end if any failed.
#
#   FUZZTIME=30s FUZZ='^FuzzProviderID$' bash hack/fuzz.sh
#
# FUZZ is an extended regexp matched against the target names (default: all).
# Targets are found by grep (func FuzzXxx(f *testing.F) in *_test.go), not by
# `go test -list`, which would compile every package. A fuzzing run takes one
# target, so every package's instrumented test binary is built first, all
# in one `go test -c` (one go command compiles a package two binaries share
# once; packages of one name take one more each), and run once per target, from the package's directory as go test
# runs it. A crasher is written to <package>/testdata/fuzz/<Name>/<hash>,
# where `go test` replays it from then on: fix the bug and commit that file
# as the regression test.
#
# FUZZJOBS targets fuzz at once (default: the CPUs, nproc), each with
# FUZZPARALLEL workers (default: 1 when several run at once, else
# GOMAXPROCS): one worker a CPU either way, so a target gets as many
# executions as when it ran alone on every CPU, while the start-up each
# target pays (its baseline coverage) overlaps another's fuzzing.
set -uo pipefail

cd "$(dirname "$0")/.."
root=$PWD
fuzztime=${FUZZTIME:-3s}
filter=${FUZZ:-.}
go=${GO:-go}
jobs=${FUZZJOBS:-$(nproc 2>/dev/null || echo 1)}
parallel=()
if [[ -n ${FUZZPARALLEL:-} ]]; then
	parallel=(-test.parallel="$FUZZPARALLEL")
elif ((jobs > 1)); then
	parallel=(-test.parallel=1)
fi
module=$("$go" list -m)
cachedir=$("$go" env GOCACHE)/fuzz

# Every "<dir> <Name>" pair matching FUZZ, sorted by package. hack/ is a
# module of its own and bin/ holds tools, so neither is searched.
mapfile -t targets < <(
	grep -rEo --include='*_test.go' --exclude-dir=hack --exclude-dir=bin --exclude-dir=.git \
		'^func Fuzz[A-Za-z0-9_]*\(' . |
		sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#; s#^\./[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#. \1#' |
		sort -u |
		while read -r dir name; do [[ $name =~ $filter ]] && echo "$dir $name"; done
)
if ((${#targets[@]} == 0)); then
	echo "fuzz: no target matches FUZZ=$filter" >&2
	exit 1
fi

# flaked reports whether a failed run's log is only Go 1.26's coordinator
# race (go.dev/issue/75804, fixed in Go 1.27): the fuzzing context's
# deadline escaping as "context deadline exceeded" when -fuzztime runs out
# on a busy machine, with no failing input written and no test failing.
flaked() {
	grep -q '^    context deadline exceeded$' "$1" &&
		! grep -q -e 'Failing input written' -e 'panic:' -e '^        ' "$1"
}

# report prints the tail of a failed run: from its first "--- FAIL", or its
# last lines (a build error), and where the crasher went.
report() { # log dir name
	if first=$(grep -m 1 -n -e '--- FAIL' "$1" | cut -d: -f1) && [[ -n $first ]]; then
		tail -n "+$first" "$1" | head -n 30 | sed 's/^/     /'
	else
		tail -n 20 "$1" | sed 's/^/     /'
	fi
	if crasher=$(grep -Eo 'testdata/fuzz/[^ ]+' "$1" | head -n 1) && [[ -n $crasher ]]; then
		echo "     crasher: $2/$crasher (replay: go test -run='^$3\$/$(basename "$crasher")\$' ./$2)"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
failed=()
start=$SECONDS

# What is instrumented for coverage guidance. `go test -fuzz` instruments
# every package the binary links (-d=libfuzzer), the Kubernetes tree
# included, which is then compiled once more for fuzzing alone: ten minutes
# of a cold `make test` on two cores. An input of these targets goes
# through this module's code and what it requires directly (the cloud
# SDKs, the config, key and URL parsers), so that is what is instrumented,
# with the compiler flag go test -fuzz passes; the Kubernetes libraries
# (k8s.io, sigs.k8s.io) are the compiled packages every other target
# shares. Fuzzing reports "gathering baseline coverage" as with -fuzz; on a
# platform Go cannot instrument it runs unguided, as go test -fuzz does.
instrument=()
case $("$go" env GOOS)/$("$go" env GOARCH) in
linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64 | freebsd/amd64 | freebsd/arm64 | openbsd/amd64 | openbsd/arm64 | windows/amd64 | windows/arm64)
	while read -r mod; do
		[[ -n $mod && ! $mod =~ ^(k8s\.io|sigs\.k8s\.io)/ ]] && instrument+=("-gcflags=$mod/...=-d=libfuzzer")
	done < <("$go" list -m -f '{{if not .Indirect}}{{.Path}}{{end}}' all)
	;;
esac

# binary is where a package's instrumented test binary goes: go test -c -o
# <dir>/ names it after the package, so packages of one name (each cloud's
# internal/cloud) are built by separate go commands, into a directory each
# (round 0, 1, ...); the build cache shares what they have in common.
bins=$tmp/bins
declare -A pkgname round
while read -r dir name; do pkgname[$dir]=$name; done < <(
	printf './%s\n' "${targets[@]%% *}" | uniq | xargs "$go" list -f '{{.Dir}} {{.Name}}' |
		sed "s#^$root/##; s#^$root #. #"
)
declare -A named
rounds=0
for dir in $(printf '%s\n' "${targets[@]%% *}" | uniq); do
	r=${named[${pkgname[$dir]}]:-0}
	round[$dir]=$r
	named[${pkgname[$dir]}]=$((r + 1))
	((r + 1 > rounds)) && rounds=$((r + 1))
done
binary() { echo "$bins/${round[$1]}/${pkgname[$1]}.test"; }

t0=$SECONDS
for ((r = 0; r < rounds; r++)); do
	dirs=()
	for dir in $(printf '%s\n' "${targets[@]%% *}" | uniq); do
		[[ ${round[$dir]} == "$r" ]] && dirs+=("./$dir")
	done
	mkdir -p "$bins/$r"
	if ! "$go" test -c "${instrument[@]}" -o "$bins/$r/" "${dirs[@]}" >"$tmp/build.log" 2>&1; then
		printf '%-4s %-34s %-40s %4ds\n' FAIL "(build)" "" $((SECONDS - t0))
		tail -n 30 "$tmp/build.log" | sed 's/^/     /'
		exit 1
	fi
done
printf '%-4s %-34s %-40s %4ds\n' ok "(build)" "$(printf '%s\n' "${targets[@]%% *}" | uniq | wc -l) packages" $((SECONDS - t0))

# fuzz runs one target, and prints its line (and what failed) when done.
fuzz() { # dir name log
	local dir=$1 name=$2 log=$3 bin t0=$SECONDS
	bin=$(binary "$dir")
	if (cd "$root/$dir" && "$bin" -test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$fuzztime" \
		-test.fuzzcachedir="$cachedir/$module/$dir" -test.timeout=0 "${parallel[@]}") >"$log" 2>&1; then
		printf '%-4s %-34s %-40s %4ds\n' ok "$name" "./$dir" $((SECONDS - t0))
	elif flaked "$log"; then
		printf '%-4s %-34s %-40s %4ds  (go#75804: deadline race at the end of -fuzztime, no failing input)\n' ok "$name" "./$dir" $((SECONDS - t0))
	else
		printf '%-4s %-34s %-40s %4ds\n' FAIL "$name" "./$dir" $((SECONDS - t0))
		report "$log" "$dir" "$name"
		echo "$name ./$dir" >"$log.failed"
	fi
}

i=0
for t in "${targets[@]}"; do
	while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
	i=$((i + 1))
	fuzz "${t% *}" "${t#* }" "$log.$i" &
done
wait
for f in "$log".*.failed; do
	[[ -e $f ]] && failed+=("$(cat "$f")")
done

echo "fuzz: ${#targets[@]} targets, ${#failed[@]} failed, $((SECONDS - start))s"
if ((${#failed[@]} > 0)); then
	printf 'FAIL %s\n' "${failed[@]}" >&2
	exit 1
fi
