#!/usr/bin/env bash
# hack/fidelity.sh [cloud...]: drive each simulator with its cloud's own,
# independent client (make fidelity; docs/testing.md "Fidelity").
#
# For every cloud (default: every hack/fidelity/<cloud>.sh), it starts
# bin/cloudsim on the cloud's scenario (hack/fidelity/<cloud>.yaml, else
# examples/cloudsim/<cloud>.yaml), exports what cloudsim prints
# (CLOUDSIM_URL and the provider's variables), and runs
# hack/fidelity/<cloud>.sh with WORK, a fresh directory, and
# FIDELITY_TOOLS, where the scripts install their pinned clients (kept
# between runs). A script that cannot install its client here prints
# "skipped: <why>" and exits 0; the summary counts it as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=$(mkdir -p "${BIN:-bin}" && cd "${BIN:-bin}" && pwd)
export FIDELITY_TOOLS=${FIDELITY_TOOLS:-$BIN/fidelity}
mkdir -p "$FIDELITY_TOOLS"
CGO_ENABLED=0 go build -trimpath -o "$BIN/cloudsim" ./cmd/cloudsim

clouds=("$@")
if [ ${#clouds[@]} -eq 0 ]; then
	for f in hack/fidelity/*.sh; do clouds+=("$(basename "$f" .sh)"); done
fi

DNS_CLOUDS="brightbox triton"
declare -A result
failed=0
for cloud in "${clouds[@]}"; do
	script=hack/fidelity/$cloud.sh
	[ -f "$script" ] || { echo "fidelity: no $script" >&2; exit 2; }
	scenario=hack/fidelity/$cloud.yaml
	[ -f "$scenario" ] || scenario=examples/cloudsim/$cloud.yaml
	work=$(mktemp -d "${TMPDIR:-/tmp}/fidelity-$cloud.XXXXXX")
	echo "=== $cloud: $script against $scenario"
	dns=()
	# Clouds that hand out DNS names answer them too, so clients can check
	# them (CLOUDSIM_DNS).
	[[ " $DNS_CLOUDS " == *" $cloud "* ]] && dns=(--dns=127.0.0.1:0)
	"$BIN/cloudsim" --scenario="$scenario" "${dns[@]}" --print-env-file="$work/cloudsim.env" >"$work/cloudsim.out" 2>"$work/cloudsim.log" &
	sim=$!
	for _ in $(seq 100); do
		[ -s "$work/cloudsim.env" ] && break
		kill -0 "$sim" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -s "$work/cloudsim.env" ]; then
		echo "fidelity: cloudsim did not start for $cloud:" >&2
		cat "$work/cloudsim.log" >&2
		result[$cloud]=FAIL
		failed=1
		continue
	fi
	status=0
	(set -a && . "$work/cloudsim.env" && set +a && WORK="$work" bash "$script") 2>&1 | tee "$work/client.log" || status=$?
	kill "$sim" 2>/dev/null || true
	wait "$sim" 2>/dev/null || true
	if [ "$status" -ne 0 ]; then
		result[$cloud]=FAIL
		failed=1
		echo "--- $cloud: FAIL (client log $work/client.log, cloudsim log $work/cloudsim.log)"
	elif grep -q '^skipped: ' "$work/client.log"; then
		result[$cloud]="skipped ($(grep -m1 '^skipped: ' "$work/client.log" | cut -c10-))"
	else
		result[$cloud]=ok
		rm -rf "$work"
	fi
done

echo "=== fidelity"
for cloud in "${clouds[@]}"; do printf '%-14s %s\n' "$cloud" "${result[$cloud]}"; done
exit "$failed"
