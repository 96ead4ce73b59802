#!/usr/bin/env bash
# hack/fidelity/brightbox.sh: drive gbsim with Brightbox's own Go client
# (make fidelity; hack/fidelity.sh exports cmd/cloudsim's environment).
#
# Brightbox's command-line client is a Ruby gem (brightbox-cli) and
# rubygems is out of reach here, so the independent client is gobrightbox,
# Brightbox's Go client, pinned in hack/fidelity/brightbox/go.mod
# (v2.2.2) and driven by hack/fidelity/brightbox/main.go through a read
# and write workflow with its own OAuth2 flow over real HTTP. The clients
# listed in FIDELITY_CLIENTS are hack/fidelity/brightbox.yaml's.
set -euo pipefail

: "${FIDELITY_TOOLS:?}" "${BRIGHTBOX_API_URL:?}" "${BRIGHTBOX_CLIENT:?}"
src=hack/fidelity/brightbox
version=$(sed -n 's/^require github.com\/brightbox\/gobrightbox\/v2 \(v[0-9.]*\)$/\1/p' "$src/go.mod")
[ -n "$version" ] || { echo "brightbox: no pinned gobrightbox in $src/go.mod" >&2; exit 1; }
# The binary is named by the pinned version and a hash of its source, so
# a change to either builds it again.
sum=$(cat "$src"/go.mod "$src"/go.sum "$src"/*.go | sha256sum | cut -c1-12)
bin=$FIDELITY_TOOLS/brightbox-fidelity-gobrightbox-$version-$sum
if [ ! -x "$bin" ]; then
	echo "building the gobrightbox $version client into $bin"
	(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$bin" .)
fi

# Every API client of the scenario but the one cloudsim printed.
scenario=hack/fidelity/brightbox.yaml
if [ -z "${FIDELITY_CLIENTS:-}" ] && [ -f "$scenario" ]; then
	FIDELITY_CLIENTS=$(sed -n 's/^ *- {id: \(cli-[a-z0-9]*\), secret: \([^}]*\)}.*/\1:\2/p' "$scenario" | tr '\n' ' ')
	export FIDELITY_CLIENTS
fi

echo "gobrightbox $version against $BRIGHTBOX_API_URL (account ${BRIGHTBOX_ACCOUNT:-?})"
"$bin"
