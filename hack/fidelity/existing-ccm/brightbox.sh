#!/usr/bin/env bash
# hack/fidelity/existing-ccm/brightbox.sh: run the existing Brightbox CCM
# (github.com/brightbox/brightbox-cloud-controller-manager), unmodified,
# against bin/cloudsim and a real kube-apiserver + etcd: three Nodes, three
# LoadBalancer Services created, given an address, then deleted; at the end
# the simulated account must hold nothing the CCM made (load balancers,
# cloud IPs, server groups, firewall policies).
#
#   BRIGHTBOX_CCM=/path/to/brightbox-cloud-controller-manager hack/fidelity/existing-ccm/brightbox.sh
#
# The module proxy does not serve that CCM, so build it from its source
# (go build . in a checkout). Needs root: cloudsim answers the simulated
# cloud IPs' names on 127.0.0.53:53 (--dns), which the CCM resolves before
# it builds a load balancer, and the CCM runs in a mount namespace whose
# /etc/resolv.conf names that server. Needs bin/kube-apiserver, bin/etcd
# and bin/kubectl (make controlplane kubectl). KEEP_WORK=1 keeps the logs.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
BIN=$ROOT/bin
: "${BRIGHTBOX_CCM:?set BRIGHTBOX_CCM to the existing Brightbox CCM binary}"
[ "$(id -u)" = 0 ] || { echo "needs root (a DNS server on port 53, a mount namespace)" >&2; exit 2; }
for b in kube-apiserver etcd kubectl; do
	[ -x "$BIN/$b" ] || { echo "no $BIN/$b: make controlplane kubectl" >&2; exit 2; }
done
DNS_ADDR=${DNS_ADDR:-127.0.0.53}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/existing-brightbox-ccm.XXXXXX")
PIDS=()
cleanup() {
	local i
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		kill "${PIDS[i]}" 2>/dev/null || true
		wait "${PIDS[i]}" 2>/dev/null || true
	done
	if [[ ${KEEP_WORK:-} == 1 || ${FAILED:-} == 1 ]]; then echo "logs in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
fail() { FAILED=1; echo "FAIL: $*" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
	local what=$1 secs=$2
	shift 2
	for _ in $(seq $((secs * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "timed out after ${secs}s waiting for $what"
}

# The control plane, as hack/smoke-controlplane.sh starts it.
ETCD_PORT=$(free_port) PEER_PORT=$(free_port) API_PORT=$(free_port)
openssl genrsa -out "$WORK/sa.key" 2048 2>/dev/null
TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$TOKEN,admin,admin,system:masters" >"$WORK/tokens.csv"
"$BIN/etcd" --name=fidelity --data-dir="$WORK/etcd" --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
	--advertise-client-urls="http://127.0.0.1:$ETCD_PORT" --listen-peer-urls="http://127.0.0.1:$PEER_PORT" \
	--initial-advertise-peer-urls="http://127.0.0.1:$PEER_PORT" --initial-cluster="fidelity=http://127.0.0.1:$PEER_PORT" \
	--unsafe-no-fsync --log-level=warn >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
"$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" --cert-dir="$WORK/certs" --bind-address=127.0.0.1 \
	--advertise-address=127.0.0.1 --endpoint-reconciler-type=none --secure-port="$API_PORT" \
	--service-cluster-ip-range=10.0.0.0/24 --service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file="$WORK/sa.key" --service-account-signing-key-file="$WORK/sa.key" \
	--authorization-mode=RBAC --token-auth-file="$WORK/tokens.csv" >"$WORK/apiserver.log" 2>&1 &
PIDS+=($!)
cat >"$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "https://127.0.0.1:$API_PORT", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$TOKEN"}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
KC
export KUBECONFIG=$WORK/kubeconfig
k() { "$BIN/kubectl" "$@"; }
wait_for "kube-apiserver /readyz" 60 k get --raw /readyz

# The simulated cloud, with its names in DNS.
CGO_ENABLED=0 go build -trimpath -o "$BIN/cloudsim" ./cmd/cloudsim
"$BIN/cloudsim" --scenario=hack/fidelity/existing-ccm/brightbox.yaml --dns="$DNS_ADDR:53" --settle-after="${SETTLE_AFTER:-2s}" \
	--print-env-file="$WORK/cloudsim.env" >/dev/null 2>"$WORK/cloudsim.log" &
PIDS+=($!)
wait_for "cloudsim" 10 test -s "$WORK/cloudsim.env"
set -a && . "$WORK/cloudsim.env" && set +a
echo "nameserver $DNS_ADDR" >"$WORK/resolv.conf"

# Nodes as kubelets register them: named by server, uninitialized, Ready.
for n in srv-wrk01 srv-wrk02 srv-wrk03; do
	k apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata: {name: $n}
spec:
  taints: [{key: node.cloudprovider.kubernetes.io/uninitialized, value: "true", effect: NoSchedule}]
NODE
	k patch node "$n" --subresource=status --type=merge \
		-p '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"fidelity","lastHeartbeatTime":"'"$(date -u +%FT%TZ)"'","lastTransitionTime":"'"$(date -u +%FT%TZ)"'"}]}}' >/dev/null
done

# The existing CCM, unmodified, resolving names through cloudsim.
CCM_PORT=$(free_port)
unshare --mount sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$WORK/resolv.conf" \
	"$BRIGHTBOX_CCM" --cloud-provider=brightbox --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
	--authorization-kubeconfig="$KUBECONFIG" --leader-elect=false --use-service-account-credentials=false \
	--controllers=cloud-node,cloud-node-lifecycle,service --secure-port="$CCM_PORT" --bind-address=127.0.0.1 \
	--allocate-node-cidrs=false --configure-cloud-routes=false --v=2 >"$WORK/ccm.log" 2>&1 &
PIDS+=($!)

initialized() { [ -n "$(k get node "$1" -o jsonpath='{.spec.providerID}')" ]; }
for n in srv-wrk01 srv-wrk02 srv-wrk03; do wait_for "node $n initialized" 60 initialized "$n"; done
echo "nodes initialized: $(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.spec.providerID} {end}')"

services=(web api shop)
port=80
for s in "${services[@]}"; do
	k create service loadbalancer "$s" --tcp="$port:8080" >/dev/null
	port=$((port + 1))
done
# That CCM reports its cloud IPs' names (reverse DNS, fqdn) as the ingress.
has_ingress() { [ -n "$(k get service "$1" -o jsonpath='{.status.loadBalancer.ingress[0].ip}{.status.loadBalancer.ingress[0].hostname}')" ]; }
for s in "${services[@]}"; do
	wait_for "service $s's address" 120 has_ingress "$s"
	echo "service $s: $(k get service "$s" -o jsonpath='{.status.loadBalancer.ingress[*].ip} {.status.loadBalancer.ingress[*].hostname}')"
done
state() { curl -fsS "$CLOUDSIM_URL/_sim/state"; }
state >"$WORK/state-created.json"
python3 - "$WORK/state-created.json" <<'PY' || fail "the cloud does not hold a load balancer per Service"
import json, sys
st = json.load(open(sys.argv[1]))
lbs = [lb for lb in st["load_balancers"] if lb["status"] not in ("deleted",)]
print(f"cloud: {len(lbs)} load balancers, {len(st['cloud_ips'])} cloud IPs, "
      f"{len(st['server_groups'])} server groups, {len(st['firewall_policies'])} firewall policies")
sys.exit(0 if len(lbs) == 3 else 1)
PY

for s in "${services[@]}"; do k delete service "$s" --wait=true --timeout=180s >/dev/null; done
echo "services deleted"
# What the CCM made must go: nothing of the account's is named after a Service.
leftovers() {
	state >"$WORK/state-deleted.json"
	python3 - "$WORK/state-deleted.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
left = [("load balancer", lb["id"], lb["status"]) for lb in st["load_balancers"] if lb["status"] != "deleted"]
left += [("cloud IP", c["id"], c.get("name", "")) for c in st["cloud_ips"]]
left += [("server group", g["id"], g.get("name", "")) for g in st["server_groups"] if g.get("name") != "default"]
left += [("firewall policy", p["id"], p.get("name", "")) for p in st["firewall_policies"] if p.get("name") != "default"]
for l in left:
    print("left behind:", *l)
sys.exit(1 if left else 0)
PY
}
# The CCM deletes asynchronously after the finalizer goes; give its last
# calls (and the cloud's deleting load balancers) a moment.
for _ in $(seq 300); do leftovers >/dev/null && break; sleep 0.2; done
leftovers || fail "the existing CCM left cloud resources behind"
echo "ok: the existing Brightbox CCM created and deleted 3 Services against cloudsim; nothing left behind"
