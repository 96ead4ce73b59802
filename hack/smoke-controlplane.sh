#!/usr/bin/env bash
# Smoke test for the control-plane binaries built by `make controlplane`:
# starts etcd and kube-apiserver on loopback with free ports in a temp dir,
# waits for /readyz with admin credentials, runs a few requests, stops both.
#
#   hack/smoke-controlplane.sh [BIN_DIR]     (default: ./bin)
#
# Needs openssl (service-account key) and curl; kubectl in BIN_DIR is used
# when present. Prints the startup time and the flags used.
set -euo pipefail

BIN_DIR=$(cd "${1:-bin}" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ccmkit-smoke.XXXXXX")
ETCD_PID= APISERVER_PID=

# cleanup stops kube-apiserver before etcd: the other way round the apiserver
# spends ~10s on shutdown retrying to delete its lease.
cleanup() {
	local pid
	for pid in $APISERVER_PID $ETCD_PID; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ ${KEEP_WORK:-} == 1 ]]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# free_port prints a loopback TCP port nobody listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		if [[ -z $(ss -Htln "sport = :$p") ]] && [[ " ${USED_PORTS:-} " != *" $p "* ]]; then
			USED_PORTS="${USED_PORTS:-} $p"
			echo "$p"
			return
		fi
	done
}
ETCD_CLIENT_PORT=$(free_port)
ETCD_PEER_PORT=$(free_port)
SECURE_PORT=$(free_port)
USED_PORTS="$ETCD_CLIENT_PORT $ETCD_PEER_PORT $SECURE_PORT"

openssl genrsa -out "$WORK/sa.key" 2048 2>/dev/null
TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$TOKEN,admin,admin,system:masters" >"$WORK/tokens.csv"

start=$(date +%s.%N)

etcd_flags=(
	--name=smoke
	--data-dir="$WORK/etcd"
	--listen-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT"
	--advertise-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT"
	--listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT"
	--initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT"
	--initial-cluster="smoke=http://127.0.0.1:$ETCD_PEER_PORT"
	--unsafe-no-fsync
	--log-level=warn
)
"$BIN_DIR/etcd" "${etcd_flags[@]}" >"$WORK/etcd.log" 2>&1 &
ETCD_PID=$!

apiserver_flags=(
	--etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT"
	--cert-dir="$WORK/certs"
	--bind-address=127.0.0.1
	--advertise-address=127.0.0.1
	--endpoint-reconciler-type=none
	--secure-port="$SECURE_PORT"
	--service-cluster-ip-range=10.0.0.0/24
	--service-account-issuer=https://kubernetes.default.svc.cluster.local
	--service-account-key-file="$WORK/sa.key"
	--service-account-signing-key-file="$WORK/sa.key"
	--authorization-mode=RBAC
	--token-auth-file="$WORK/tokens.csv"
)
"$BIN_DIR/kube-apiserver" "${apiserver_flags[@]}" >"$WORK/apiserver.log" 2>&1 &
APISERVER_PID=$!

URL="https://127.0.0.1:$SECURE_PORT"
ready=
for _ in $(seq 1 600); do
	if ! kill -0 "$APISERVER_PID" 2>/dev/null; then
		echo "kube-apiserver exited; last log lines:"; tail -30 "$WORK/apiserver.log"; exit 1
	fi
	if ! kill -0 "$ETCD_PID" 2>/dev/null; then
		echo "etcd exited; last log lines:"; tail -30 "$WORK/etcd.log"; exit 1
	fi
	if [[ $(curl -ks -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$URL/readyz") == 200 ]]; then
		ready=1
		break
	fi
	sleep 0.1
done
end=$(date +%s.%N)
if [[ -z $ready ]]; then
	echo "kube-apiserver not ready after 60s; /readyz?verbose:"
	curl -ks -H "Authorization: Bearer $TOKEN" "$URL/readyz?verbose" || true
	tail -30 "$WORK/apiserver.log"
	exit 1
fi
printf 'etcd + kube-apiserver ready in %.1fs\n' "$(echo "$end - $start" | bc -l)"

echo "--- etcd $("$BIN_DIR/etcd" --version | head -1)"
printf '  %s\n' "${etcd_flags[@]}"
echo "--- kube-apiserver $("$BIN_DIR/kube-apiserver" --version)"
printf '  %s\n' "${apiserver_flags[@]}"

echo "--- GET /version"
curl -ksf -H "Authorization: Bearer $TOKEN" "$URL/version"
echo
if [[ -x $BIN_DIR/kubectl ]]; then
	kc=("$BIN_DIR/kubectl" --server="$URL" --token="$TOKEN" --insecure-skip-tls-verify)
	echo "--- kubectl version"
	"${kc[@]}" version
	echo "--- kubectl auth can-i '*' '*' (admin)"
	"${kc[@]}" auth can-i '*' '*'
	echo "--- kubectl get namespaces"
	"${kc[@]}" get namespaces
	echo "--- kubectl create/delete a ConfigMap"
	"${kc[@]}" create configmap smoke --from-literal=k=v
	"${kc[@]}" delete configmap smoke
fi
stop_start=$(date +%s.%N)
cleanup
trap - EXIT
printf 'stopped in %.1fs\n' "$(echo "$(date +%s.%N) - $stop_start" | bc -l)"
echo "smoke test passed"
