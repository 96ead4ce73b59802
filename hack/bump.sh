#!/usr/bin/env bash
# Moves the pinned control-plane versions:
#
#   hack/bump.sh KUBE_VERSION [ETCD_VERSION]      e.g. hack/bump.sh v1.37.2 v3.7.1
#
# Sets k8s.io/kubernetes (and go.etcd.io/etcd/server/v3) in hack/go.mod,
# rewrites the k8s.io/* replaces from the new k8s.io/kubernetes go.mod's own
# replace block (each staging module at v0.<minor>.<patch>), tidies, and
# updates KUBE_VERSION / ETCD_VERSION in the Makefile. Then run
# `make controlplane-smoke` (builds, then runs hack/smoke-controlplane.sh).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 || $1 != v1.* ]]; then
	sed -n '2,10p' "$0" >&2
	exit 2
fi
kube=$1 etcd=${2:-}
staging=v0.${kube#v1.}
cd "$(dirname "$0")"

info=$(go mod download -json "k8s.io/kubernetes@$kube" || true)
kube_gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$info")
if [[ ! -f $kube_gomod ]] || grep -q '"Error"' <<<"$info"; then
	echo "cannot download k8s.io/kubernetes@$kube:" >&2
	echo "$info" >&2
	exit 1
fi

# Put go.mod and go.sum back if anything below fails.
cp go.mod go.mod.bump-orig && cp go.sum go.sum.bump-orig
trap 'mv go.mod.bump-orig go.mod; mv go.sum.bump-orig go.sum; echo "bump failed; hack/go.mod unchanged" >&2' ERR

# staging modules: the left-hand sides of "k8s.io/x => ./staging/src/k8s.io/x".
want=$(awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$kube_gomod" | sort -u)
have=$(go mod edit -json | awk -F'"' '/"Old": \{/ {old = 1} old && /"Path":/ {print $4; old = 0}' | grep '^k8s\.io/' | sort -u || true)

args=()
for m in $(comm -13 <(echo "$want") <(echo "$have")); do args+=("-dropreplace=$m"); done
for m in $want; do args+=("-replace=$m=$m@$staging"); done
args+=("-require=k8s.io/kubernetes@$kube")
[[ -z $etcd ]] || args+=("-require=go.etcd.io/etcd/server/v3@$etcd")
go mod edit "${args[@]}"
go mod tidy
trap - ERR
rm go.mod.bump-orig go.sum.bump-orig

sed -i -e "s/^KUBE_VERSION := .*/KUBE_VERSION := $kube/" ../Makefile
[[ -z $etcd ]] || sed -i -e "s/^ETCD_VERSION := .*/ETCD_VERSION := $etcd/" ../Makefile
echo "hack/go.mod now pins k8s.io/kubernetes $kube (staging $staging)${etcd:+ and etcd $etcd}."
echo "Next: make controlplane-smoke"
