#!/usr/bin/env bash
# hack/fidelity/rancher.sh: drive ranchersim with Rancher's own CLI for
# Rancher 1.x, rancher v0.6.14 (the last of the v0.6 line, for Rancher
# 1.6), unchanged (make fidelity; hack/fidelity.sh starts cmd/cloudsim on
# hack/fidelity/rancher.yaml and exports what it prints).
#
# The CLI predates Go modules: it builds in GOPATH mode from its own
# vendor/ directory. The Go module proxy does not serve
# github.com/rancher/cli@v0.6.14 (it answers 403 "not available", and a
# module zip would leave vendor/ out anyway), and GitHub is out of reach
# here, so the script builds from $RANCHER_CLI_SRC: a clone of
# github.com/rancher/cli (bare or not; tag v0.6.14 is checked to be the
# pinned commit) or a source tree of v0.6.14 (checked against a hash of
# its own sources and vendor.conf). Without it, and without the binary
# in $FIDELITY_TOOLS, it prints "skipped: <why>" and exits 0.
#
# The workflow, against $CLOUDSIM_URL as the server's URL with the
# environment 1a5 (as `rancher config` stores it): environment, hosts,
# ps, stacks (the catalog service at /v1-catalog), inspect by ID and by
# stack/service name; stop, start, scale and restart of the load
# balancer, stop and start of a host, rm of an external service; a
# second API key of the scenario; waiting for each change to settle
# (cloudsim settles with time). Any unexpected answer fails the run.
set -euo pipefail

: "${FIDELITY_TOOLS:?}" "${CLOUDSIM_URL:?}" "${CATTLE_URL:?}" "${CATTLE_ACCESS_KEY:?}" "${CATTLE_SECRET_KEY:?}" "${WORK:?}"
CLI_VERSION=v0.6.14
CLI_COMMIT=7173311045943b4615cb019e6dbb5e28bdbfb61b
# sha256 of `sha256sum` over main.go, cmd/, monitor/ and vendor.conf of
# v0.6.14, sorted by path (vendor.conf pins every vendored package).
CLI_TREE_SUM=8f6d45344d091b341914407360072210379fb54a056811a5ad7d4d8834cf6f4b
# The scenario's second environment API key.
SECOND_ACCESS_KEY=7E2A9C4B1D6F3A8E5B0C
SECOND_SECRET_KEY=fidelity-second-secret

rancher=$FIDELITY_TOOLS/rancher-cli-$CLI_VERSION/rancher

tree_sum() { (cd "$1" && find main.go cmd monitor vendor.conf -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1); }

# build_cli copies the pinned sources into a GOPATH under $WORK and builds
# them as the CLI's scripts/build does.
build_cli() {
	local src=$1 gopath=$WORK/gopath
	local dst=$gopath/src/github.com/rancher/cli
	mkdir -p "$dst"
	if git --git-dir="$src" rev-parse -q --verify "$CLI_VERSION^{commit}" >/dev/null 2>&1 ||
		git -C "$src" rev-parse -q --verify "$CLI_VERSION^{commit}" >/dev/null 2>&1; then
		local gitdir=$src
		git --git-dir="$src" rev-parse -q --verify HEAD >/dev/null 2>&1 || gitdir=$(git -C "$src" rev-parse --absolute-git-dir)
		local commit
		commit=$(git --git-dir="$gitdir" rev-parse "$CLI_VERSION^{commit}")
		[ "$commit" == "$CLI_COMMIT" ] || { echo "rancher: $src: $CLI_VERSION is $commit, want $CLI_COMMIT" >&2; exit 1; }
		git --git-dir="$gitdir" archive "$CLI_COMMIT" | tar -x -C "$dst"
	elif [ -f "$src/main.go" ] && [ -d "$src/vendor" ]; then
		local sum
		sum=$(tree_sum "$src")
		[ "$sum" == "$CLI_TREE_SUM" ] || { echo "rancher: $src is not rancher/cli $CLI_VERSION (sources hash $sum, want $CLI_TREE_SUM)" >&2; exit 1; }
		cp -R "$src/." "$dst"
	else
		echo "rancher: RANCHER_CLI_SRC=$src is neither a clone of github.com/rancher/cli nor its source tree" >&2
		exit 1
	fi
	[ "$(tree_sum "$dst")" == "$CLI_TREE_SUM" ] || { echo "rancher: the $CLI_VERSION sources do not hash to $CLI_TREE_SUM" >&2; exit 1; }
	echo "building rancher CLI $CLI_VERSION ($CLI_COMMIT) into $rancher"
	mkdir -p "$(dirname "$rancher")"
	(cd "$dst" && GOPATH=$gopath GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=0 \
		go build -trimpath -ldflags "-w -X main.VERSION=$CLI_VERSION" -o "$rancher" .)
}

if ! [ -x "$rancher" ] || [ "$("$rancher" --version 2>/dev/null)" != "rancher version $CLI_VERSION" ]; then
	if [ -z "${RANCHER_CLI_SRC:-}" ]; then
		echo "skipped: rancher CLI $CLI_VERSION predates Go modules and the Go module proxy does not serve it; set RANCHER_CLI_SRC to a clone of github.com/rancher/cli (tag $CLI_VERSION) to build it"
		exit 0
	fi
	build_cli "$RANCHER_CLI_SRC"
fi

project=${CATTLE_URL##*/projects/}
project=${project%%/*}
export HOME=$WORK/home RANCHER_URL=$CLOUDSIM_URL RANCHER_ENVIRONMENT=$project
export RANCHER_ACCESS_KEY=$CATTLE_ACCESS_KEY RANCHER_SECRET_KEY=$CATTLE_SECRET_KEY
mkdir -p "$HOME"

fail() { echo "rancher: FAIL: $*" >&2; exit 1; }
# rcli runs the CLI; on failure it shows what it printed.
rcli() {
	local out
	out=$("$rancher" "$@" 2>&1) || fail "rancher $*: $out"
	printf '%s\n' "$out"
}
# expect WHAT WANT GOT fails unless GOT equals WANT.
expect() { [ "$3" == "$2" ] || fail "$1: got [$3], want [$2]"; }
# contains WHAT NEEDLE HAYSTACK fails unless HAYSTACK holds NEEDLE.
contains() { grep -qF -- "$2" <<<"$3" || fail "$1: [$2] not in [$3]"; }
# state_of ID prints a resource's state (inspect by ID).
state_of() { rcli inspect --format '{{.state}}' "$1"; }
# wait_for WHAT WANT CMD...: runs CMD until it prints WANT, for 30s at most.
wait_for() {
	local what=$1 want=$2 got=""
	shift 2
	for _ in $(seq 60); do
		got=$("$@")
		[ "$got" == "$want" ] && return 0
		sleep 0.5
	done
	fail "$what: still [$got] after 30s, want [$want]"
}

echo "$("$rancher" --version) against $RANCHER_URL (environment $RANCHER_ENVIRONMENT)"

echo "--- read: environment, hosts, ps, stacks, inspect"
expect "environment" "$project Default active" "$(rcli environment --format '{{.ID}} {{.Environment.Name}} {{.Environment.State}}')"
expect "hosts" "worker-1 active 10.0.0.11 tier=web|worker-2 active 10.0.0.12 " \
	"$(rcli hosts --format '{{.Host.Hostname}} {{.State}} {{.Host.AgentIpAddress}} {{.Labels}}' | paste -sd'|')"
expect "hosts -a" "worker-1 worker-2 worker-3" "$(rcli hosts -a --format '{{.Host.Hostname}}' | sort | xargs)"
host_id() { rcli hosts -a --format '{{.Host.Id}} {{.Host.Hostname}}' | awk -v n="$1" '$2 == n {print $1}'; }
h2=$(host_id worker-2)
ps=$(rcli ps --format '{{.Service.Id}} {{.Name}} {{.Service.Type}} {{.CombinedState}} {{.Service.Scale}}')
contains "ps" "kubernetes-loadbalancers/lb-web loadBalancerService healthy 1" "$ps"
contains "ps" "kubernetes-loadbalancers/worker-1 externalService healthy" "$ps"
svc_id() { rcli ps -a --format '{{.Service.Id}} {{.Name}}' | awk -v n="$1" '$2 == n {print $1}'; }
lb=$(svc_id kubernetes-loadbalancers/lb-web)
ext=$(svc_id kubernetes-loadbalancers/worker-2)
[ -n "$lb" ] && [ -n "$ext" ] || fail "ps: no lb-web or worker-2 in [$ps]"
expect "stacks" "kubernetes-loadbalancers healthy kubernetes-loadbalancers:// 3" \
	"$(rcli stacks --format '{{.Stack.Name}} {{.State}} {{.Catalog}} {{.ServiceCount}}' | grep '^kubernetes-loadbalancers ' | xargs)"
expect "inspect host" "worker-2 host active" "$(rcli inspect --format '{{.hostname}} {{.type}} {{.state}}' "$h2")"
expect "inspect by name" "$lb loadBalancerService 80:80/tcp" \
	"$(rcli inspect --format '{{.id}} {{.type}} {{index .launchConfig.ports 0}}' kubernetes-loadbalancers/lb-web)"
rcli inspect "$lb" | python3 -c 'import json, sys
d = json.load(sys.stdin)
assert d["publicEndpoints"] and d["publicEndpoints"][0]["port"] == 80, d["publicEndpoints"]
assert "links" not in d and "actions" not in d, "inspect without --links shows links"'

echo "--- a second API key of the environment"
expect "hosts with the second key" "2" "$(RANCHER_ACCESS_KEY=$SECOND_ACCESS_KEY RANCHER_SECRET_KEY=$SECOND_SECRET_KEY rcli hosts -q | wc -l | xargs)"
if RANCHER_SECRET_KEY=wrong "$rancher" hosts >/dev/null 2>&1; then fail "a wrong secret key was accepted"; fi

echo "--- write: stop, start, scale, restart the load balancer"
expect "stop" "$lb" "$(rcli stop "$lb")"
wait_for "load balancer after stop" inactive state_of "$lb"
expect "ps after stop" "" "$(rcli ps --format '{{.Service.Id}}' | grep -x "$lb" || true)"
expect "start" "$lb" "$(rcli start kubernetes-loadbalancers/lb-web)"
wait_for "load balancer after start" active state_of "$lb"
expect "scale" "kubernetes-loadbalancers/lb-web" "$(rcli scale kubernetes-loadbalancers/lb-web=2)"
wait_for "load balancer after scale" "active 2 2" rcli inspect --format '{{.state}} {{.scale}} {{len .publicEndpoints}}' "$lb"
expect "restart" "$lb" "$(rcli restart "$lb")"
wait_for "load balancer after restart" active state_of "$lb"

echo "--- write: stop and start a host"
expect "stop host" "$h2" "$(rcli stop "$h2")"
wait_for "worker-2 after stop" inactive state_of "$h2"
wait_for "load balancer on the remaining host" 1 rcli inspect --format '{{len .publicEndpoints}}' "$lb"
expect "start host" "$h2" "$(rcli start "$h2")"
wait_for "worker-2 after start" active state_of "$h2"

echo "--- write: remove an external service"
expect "rm" "$ext" "$(rcli rm --type service "$ext")"
wait_for "worker-2's service after rm" removed state_of "$ext"
expect "ps after rm" "" "$(rcli ps --format '{{.Service.Id}}' | grep -x "$ext" || true)"
contains "ps -a after rm" "$ext removed" "$(rcli ps -a --format '{{.Service.Id}} {{.Service.State}}')"

echo "rancher CLI $CLI_VERSION: ok"
