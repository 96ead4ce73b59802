#!/usr/bin/env bash
# hack/fidelity/digitalocean.sh: drive dosim with DigitalOcean's own CLI,
# doctl, unchanged (make fidelity; hack/fidelity.sh starts cmd/cloudsim on
# hack/fidelity/digitalocean.yaml and exports what it prints).
#
# doctl is a Go program: it is built at the pinned version from the Go
# module proxy, in its own module (its go.mod and go.sum, so with the
# dependencies it was released with), into $FIDELITY_TOOLS. It then runs a
# read and write workflow against $CLOUDSIM_URL with --api-url and -t:
# account, regions, sizes, droplets (get, list by tag, actions with
# --wait, delete), tags, load balancers by droplet IDs and by tag (create
# --wait, get, update, delete), firewalls (create, get, add and remove
# droplets, tags and rules, list by droplet, delete), certificates, and
# paging past 200 items. Any unexpected answer fails the run.
set -euo pipefail

: "${FIDELITY_TOOLS:?}" "${CLOUDSIM_URL:?}" "${WORK:?}"
DOCTL_VERSION=1.166.0
TOKEN=${DIGITALOCEAN_ACCESS_TOKEN:-${DO_ACCESS_TOKEN:?}}
# The scenario's other token of the same team.
OTHER_TOKEN=fidelity-readonly-token

doctl=$FIDELITY_TOOLS/doctl-v$DOCTL_VERSION/doctl
if ! [ -x "$doctl" ] || ! "$doctl" version 2>/dev/null | grep "^doctl version $DOCTL_VERSION-release" >/dev/null; then
	echo "building doctl v$DOCTL_VERSION into $doctl"
	# go install ...@version needs the module's version list, which the
	# proxy may refuse; download the exact version and build it in place.
	# (From $WORK: outside this repository's module, whose go.mod and
	# go.sum stay untouched.)
	dir=$(cd "$WORK" && go mod download -json "github.com/digitalocean/doctl@v$DOCTL_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -d "$dir" ] || { echo "digitalocean: could not download doctl v$DOCTL_VERSION" >&2; exit 1; }
	IFS=. read -r major minor patch <<<"$DOCTL_VERSION"
	x=github.com/digitalocean/doctl
	mkdir -p "$(dirname "$doctl")"
	(cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath \
		-ldflags "-X $x.Major=$major -X $x.Minor=$minor -X $x.Patch=$patch -X $x.Label=release" \
		-o "$doctl" ./cmd/doctl)
fi

fail() { echo "digitalocean: FAIL: $*" >&2; exit 1; }
# dctl runs doctl against the simulator; the config file keeps it off ~.
dctl() { "$doctl" --api-url "$CLOUDSIM_URL/" -t "$TOKEN" --config "$WORK/doctl.yaml" --interactive=false "$@"; }
# expect WHAT WANT GOT fails unless GOT equals WANT.
expect() { [ "$3" == "$2" ] || fail "$1: got [$3], want [$2]"; }
# json_get EXPR prints a python3 expression over the JSON on stdin (d).
json_get() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# json_check EXPR: evaluates a python3 expression over the JSON on stdin
# (bound to d); it prints what it checks and exits 1 when it is false.
json_check() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
ok = bool(eval(sys.argv[1]))
print("  check:", sys.argv[1], "->", ok)
sys.exit(0 if ok else 1)' "$1"
}

echo "$("$doctl" version | head -1) against $CLOUDSIM_URL"

echo "--- account, regions, sizes"
expect "account" "sammy@example.com active" "$(dctl account get --format Email,Status --no-header | xargs)"
expect "account with the team's other token" "active" "$("$doctl" --api-url "$CLOUDSIM_URL/" -t "$OTHER_TOKEN" --config "$WORK/doctl.yaml" account get --format Status --no-header | xargs)"
if "$doctl" --api-url "$CLOUDSIM_URL/" -t wrong-token --config "$WORK/doctl.yaml" --http-retry-max 0 account get >/dev/null 2>&1; then fail "a wrong token was accepted"; fi
expect "regions" 13 "$(dctl compute region list --format Slug --no-header | wc -l)"
dctl compute region list --format Slug,Available --no-header | grep '^nyc3 *true$' >/dev/null || fail "nyc3 not listed available"
expect "sizes" 12 "$(dctl compute size list --format Slug --no-header | wc -l)"
expect "size s-1vcpu-1gb" "s-1vcpu-1gb 1024 1 25 6.00" "$(dctl compute size list --format Slug,Memory,VCPUs,Disk,PriceMonthly --no-header | grep '^s-1vcpu-1gb ' | xargs)"

echo "--- droplets"
expect "droplets" 4 "$(dctl compute droplet list --format ID --no-header | wc -l)"
expect "droplets tagged k8s-worker" "worker-1 worker-2 worker-3" "$(dctl compute droplet list --tag-name k8s-worker --format Name --no-header | sort | xargs)"
droplet_id() { dctl compute droplet list --format ID,Name --no-header | awk -v n="$1" '$2 == n {print $1}'; }
w1=$(droplet_id worker-1) w2=$(droplet_id worker-2) w3=$(droplet_id worker-3) spare=$(droplet_id spare-1)
expect "worker-2's size" "s-1vcpu-2gb 2048 1 50" "$(dctl compute droplet get "$w2" --format SizeSlug,Memory,VCPUs,Disk --no-header | xargs)"
dctl compute droplet get "$w1" -o json | json_check "not d[0]['networks']['v4'][1]['ip_address'].startswith('100.') and d[0]['networks']['v4'][0]['ip_address'].startswith('10.') and d[0]['size']['price_monthly'] > 0"

echo "--- droplet actions"
expect "power-off --wait" "power_off completed" "$(dctl compute droplet-action power-off "$w3" --wait --format Type,Status --no-header | xargs)"
expect "worker-3 after power-off" "off" "$(dctl compute droplet get "$w3" --format Status --no-header | xargs)"
expect "power-on --wait" "power_on completed" "$(dctl compute droplet-action power-on "$w3" --wait --format Type,Status --no-header | xargs)"
expect "worker-3 after power-on" "active" "$(dctl compute droplet get "$w3" --format Status --no-header | xargs)"
expect "reboot --wait" "reboot completed" "$(dctl compute droplet-action reboot "$w3" --wait --format Type,Status --no-header | xargs)"
action=$(dctl compute droplet-action power-cycle "$w3" --format ID --no-header | xargs)
expect "action get" "power_cycle" "$(dctl compute action get "$action" --format Type --no-header | xargs)"

echo "--- droplet delete"
dctl compute droplet delete "$spare" --force
if dctl compute droplet get "$spare" >/dev/null 2>&1; then fail "droplet $spare still there after delete"; fi
expect "droplets after delete" 3 "$(dctl compute droplet list --format ID --no-header | wc -l)"

echo "--- tags"
dctl compute tag create fidelity-tag >/dev/null
dctl compute tag list --format Name --no-header | grep -x fidelity-tag >/dev/null || fail "tag fidelity-tag not listed"
dctl compute tag delete fidelity-tag --force
if dctl compute tag get fidelity-tag >/dev/null 2>&1; then fail "tag fidelity-tag still there after delete"; fi

echo "--- load balancer by droplet IDs"
rules=entry_protocol:tcp,entry_port:80,target_protocol:tcp,target_port:30080
lb=$(dctl compute load-balancer create --name fidelity-ids --region nyc3 --droplet-ids "$w1,$w2" --forwarding-rules "$rules" --wait -o json | json_get "d[0]['id']")
[ -n "$lb" ] || fail "load-balancer create printed no ID"
dctl compute load-balancer get "$lb" -o json | json_check "d[0]['status'] == 'active' and d[0]['ip'] != '' and sorted(d[0]['droplet_ids']) == sorted([$w1, $w2])"
dctl compute load-balancer update "$lb" --name fidelity-ids --region nyc3 --droplet-ids "$w1" --forwarding-rules "$rules" >/dev/null
dctl compute load-balancer get "$lb" -o json | json_check "d[0]['droplet_ids'] == [$w1]"
dctl compute load-balancer add-droplets "$lb" --droplet-ids "$w3"
dctl compute load-balancer get "$lb" -o json | json_check "sorted(d[0]['droplet_ids']) == sorted([$w1, $w3])"
dctl compute load-balancer delete "$lb" --force
if dctl compute load-balancer get "$lb" >/dev/null 2>&1; then fail "load balancer $lb still there after delete"; fi

echo "--- load balancer by tag"
lb=$(dctl compute load-balancer create --name fidelity-tag --region nyc3 --tag-name k8s-worker --forwarding-rules "$rules" --wait -o json | json_get "d[0]['id']")
dctl compute load-balancer get "$lb" -o json | json_check "d[0]['tag'] == 'k8s-worker' and sorted(d[0]['droplet_ids']) == sorted([$w1, $w2, $w3])"
dctl compute load-balancer list -o json | json_check "len(d) == 1 and d[0]['id'] == '$lb'"
dctl compute load-balancer delete "$lb" --force

echo "--- firewalls"
fw=$(dctl compute firewall create --name fidelity-fw --tag-names k8s-worker \
	--inbound-rules "protocol:tcp,ports:22,address:0.0.0.0/0 protocol:icmp,address:0.0.0.0/0" \
	--outbound-rules "protocol:tcp,ports:all,address:0.0.0.0/0" --format ID --no-header | xargs)
[ -n "$fw" ] || fail "firewall create printed no ID"
# The API answers "0" for all ports and for ICMP (godo issue 149).
dctl compute firewall get "$fw" -o json | json_check "sorted(r['protocol'] + ':' + r['ports'] for r in d[0]['inbound_rules']) == ['icmp:0', 'tcp:22'] and d[0]['outbound_rules'][0]['ports'] == '0' and d[0]['status'] in ('waiting', 'succeeded')"
dctl compute firewall add-droplets "$fw" --droplet-ids "$w1"
dctl compute tag create fidelity-fw-tag >/dev/null
dctl compute firewall add-tags "$fw" --tag-names fidelity-fw-tag
dctl compute firewall add-rules "$fw" --inbound-rules "protocol:udp,ports:53,address:0.0.0.0/0"
dctl compute firewall get "$fw" -o json | json_check "d[0]['droplet_ids'] == [$w1] and sorted(d[0]['tags']) == ['fidelity-fw-tag', 'k8s-worker'] and len(d[0]['inbound_rules']) == 3"
dctl compute firewall list-by-droplet "$w2" -o json | json_check "[f['id'] for f in d] == ['$fw']"
dctl compute firewall remove-rules "$fw" --inbound-rules "protocol:udp,ports:53,address:0.0.0.0/0" --outbound-rules "protocol:tcp,ports:all,address:0.0.0.0/0"
dctl compute firewall remove-droplets "$fw" --droplet-ids "$w1"
dctl compute firewall remove-tags "$fw" --tag-names fidelity-fw-tag
dctl compute firewall get "$fw" -o json | json_check "d[0]['droplet_ids'] == [] and d[0]['tags'] == ['k8s-worker'] and len(d[0]['inbound_rules']) == 2 and d[0]['outbound_rules'] == []"
dctl compute firewall delete "$fw" --force
if dctl compute firewall get "$fw" >/dev/null 2>&1; then fail "firewall $fw still there after delete"; fi

echo "--- certificates"
expect "certificates" "web-cert lets_encrypt" "$(dctl compute certificate list --format Name,Type --no-header | xargs)"

echo "--- paging: 205 tags (doctl asks 200 a page)"
before=$(dctl compute tag list --format Name --no-header | wc -l)
for i in $(seq -w 1 205); do dctl compute tag create "page-$i" >/dev/null; done
expect "tags over two pages" $((before + 205)) "$(dctl compute tag list --format Name --no-header | wc -l)"
expect "distinct tags" $((before + 205)) "$(dctl compute tag list --format Name --no-header | sort -u | wc -l)"

echo "digitalocean: doctl $DOCTL_VERSION: all checks passed"
