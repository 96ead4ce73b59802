#!/bin/sh
# Checks, with Prometheus's own config loader, the scrape job the Triton
# metrics controller writes (the golden file providers/triton keeps) and
# any Prometheus configuration files given as arguments.
set -eu
cd "$(dirname "$0")"
go test ./...
if [ "$#" -gt 0 ]; then
	go run . "$@"
fi
