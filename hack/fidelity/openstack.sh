#!/usr/bin/env bash
# hack/fidelity/openstack.sh: drive openstacksim with the official OpenStack
# client, unchanged (make fidelity; hack/fidelity.sh exports cmd/cloudsim's
# OS_* environment and runs this with WORK, a fresh directory).
#
# The client is Debian's python3-openstackclient with the Octavia plugin
# python3-octaviaclient (and what they depend on: openstacksdk,
# keystoneauth1, novaclient, ...), installed with apt-get at the exact
# versions pinned below, and only when another version (or none) is
# installed. apt installs it system-wide, so FIDELITY_TOOLS only keeps a
# note of what was checked. Where apt-get or the pinned versions are not
# available, the script says "skipped: ..." and exits 0.
#
# It reads servers, flavors, images, networks, subnets, ports, routers,
# security groups, floating IPs, the compute, network and volume
# availability zones, quotas, load balancers and their statistics and
# Octavia quotas, stops and starts a server, then creates and deletes a
# security group with a rule, a floating IP, a port, and a load balancer
# tree (listener, pool, member, health monitor; --wait for ACTIVE at each
# step, then a cascade delete), and takes a Cinder volume through its
# life: created, extended, attached to a server and detached through
# Nova, snapshotted (in use, with --force), restored from the snapshot
# into a new volume, refused a delete while it has a snapshot, deleted;
# checking each answer.
set -euo pipefail

: "${FIDELITY_TOOLS:?}" "${WORK:?}" "${OS_AUTH_URL:?}" "${OS_USERNAME:?}" "${OS_PASSWORD:?}"

PINNED=(python3-openstackclient=6.0.0-4 python3-octaviaclient=3.1.0-2)

skip() {
	echo "skipped: $*"
	exit 0
}
fail() {
	echo "openstack fidelity: FAIL: $*" >&2
	exit 1
}

# install installs every pinned package not installed at its version.
install() {
	local need=() p
	for p in "${PINNED[@]}"; do
		if [ "$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "${p%%=*}" 2>/dev/null)" != "ii ${p#*=}" ]; then
			need+=("$p")
		fi
	done
	[ ${#need[@]} -eq 0 ] && return
	command -v apt-get >/dev/null || skip "no apt-get to install ${need[*]}"
	[ "$(id -u)" -eq 0 ] || skip "installing ${need[*]} needs root"
	echo "installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends "${need[@]}" >"$WORK/apt.log" 2>&1; then
		apt-get update >>"$WORK/apt.log" 2>&1 || true
		apt-get install -y --no-install-recommends "${need[@]}" >>"$WORK/apt.log" 2>&1 ||
			skip "apt-get cannot install ${need[*]} here (see $WORK/apt.log)"
	fi
}
install
printf '%s\n' "${PINNED[@]}" >"$FIDELITY_TOOLS/openstack-client.version"

# The client's own state (caches, clouds.yaml) stays in WORK; it talks to
# the simulator through the OS_* variables only.
export HOME=$WORK XDG_CACHE_HOME=$WORK/cache XDG_CONFIG_HOME=$WORK/config
unset OS_CLOUD OS_CLIENT_CONFIG_FILE
echo "$(openstack --version 2>&1), octaviaclient $(dpkg-query -W -f='${Version}' python3-octaviaclient) against $OS_AUTH_URL"

n=0
# os runs one openstack command, failing with its output when it fails;
# with -o FILE its standard output goes to FILE.
os() {
	local out=$WORK/out.$((++n))
	if [ "$1" = -o ]; then
		out=$2
		shift 2
	fi
	echo "+ openstack $*"
	if ! openstack "$@" >"$out" 2>"$WORK/err"; then
		cat "$out" "$WORK/err" >&2
		fail "openstack $*"
	fi
}
# expect FILE PYTHON-EXPR MESSAGE: the expression, on the JSON in FILE as
# v, must be true.
expect() {
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" || {
		cat "$1" >&2
		fail "$3"
	}
}
# value FILE PYTHON-EXPR: the expression's value on the JSON in FILE.
value() {
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}
# gone ID KIND...: openstack KIND... show ID answers that there is no
# such thing now.
gone() {
	local id=$1
	shift
	if openstack "$@" show "$id" >"$WORK/gone" 2>&1; then
		fail "$* $id is still there after its delete"
	fi
	grep -qi 'not found\|No .* found\|Unable to locate\|No .* with a name or ID of' "$WORK/gone" || {
		cat "$WORK/gone" >&2
		fail "openstack $* show $id: not a not-found answer"
	}
}
# names is the Python expression of the names in a list.
names='[x.get("Name") or x.get("name") for x in v]'

# --- reads ---
os -o "$WORK/token.json" token issue -f json
project=$(value "$WORK/token.json" 'v["project_id"]')

os -o "$WORK/servers.json" server list -f json
expect "$WORK/servers.json" "sorted($names) == ['worker-1', 'worker-2', 'worker-3']" "server list: not the scenario's three servers"
os -o "$WORK/server.json" server show worker-2 -f json
expect "$WORK/server.json" 'v["status"] == "ACTIVE" and "10.0.0.20" in json.dumps(v["addresses"]) and v["flavor"].startswith("m1.medium")' \
	"server show worker-2: not the scenario's"
os -o "$WORK/server3.json" server show worker-3 -f json
expect "$WORK/server3.json" 'v["status"] == "SHUTOFF"' "server show worker-3: not SHUTOFF"
os -o "$WORK/flavors.json" flavor list -f json
expect "$WORK/flavors.json" "'m1.medium' in $names" "flavor list: no m1.medium"
os -o "$WORK/images.json" image list -f json
expect "$WORK/images.json" "len(v) >= 1 and all(x['Status'] == 'active' for x in v)" "image list: no active image"
os -o "$WORK/networks.json" network list -f json
expect "$WORK/networks.json" "{'private', 'public'} <= set($names)" "network list: no private and public networks"
os -o "$WORK/subnets.json" subnet list -f json
expect "$WORK/subnets.json" "'10.0.0.0/16' in [x['Subnet'] for x in v]" "subnet list: no 10.0.0.0/16"
os -o "$WORK/ports.json" port list -f json
expect "$WORK/ports.json" "any('10.0.0.20' in json.dumps(x['Fixed IP Addresses']) for x in v)" "port list: no port with 10.0.0.20"
os -o "$WORK/routers.json" router list -f json
expect "$WORK/routers.json" "'router1' in $names" "router list: no router1"
os -o "$WORK/sgs.json" security group list -f json
expect "$WORK/sgs.json" "'default' in $names" "security group list: no default group"
os -o "$WORK/fips.json" floating ip list -f json
expect "$WORK/fips.json" "any(x['Fixed IP Address'] == '10.0.0.20' for x in v)" "floating ip list: none on worker-2"
os -o "$WORK/az-compute.json" availability zone list --compute -f json
expect "$WORK/az-compute.json" "['nova'] == [x['Zone Name'] for x in v] and v[0]['Zone Status'] == 'available'" "compute zones: not nova"
os -o "$WORK/az-network.json" availability zone list --network --long -f json
expect "$WORK/az-network.json" "sorted((x['Zone Name'], x['Zone Resource']) for x in v) == [('nova', 'network'), ('nova', 'router')]" \
	"network zones: not nova for networks and routers"
os -o "$WORK/quota.json" quota show -f json
expect "$WORK/quota.json" 'v["instances"] > 0 and v["ports"] != 0 and v["volumes"] > 0 and v["gigabytes"] > 0' \
	"quota show: no compute, network or volume quotas"
os -o "$WORK/lbs.json" loadbalancer list -f json
expect "$WORK/lbs.json" 'v == []' "loadbalancer list: not empty"
os -o "$WORK/lbquota.json" loadbalancer quota show "$project" -f json
expect "$WORK/lbquota.json" 'v["load_balancer"] == -1 and v["listener"] == -1 and v["member"] == -1' "loadbalancer quota show: not Octavia's defaults"
os -o "$WORK/lbquotas.json" loadbalancer quota list -f json
expect "$WORK/lbquotas.json" 'v == []' "loadbalancer quota list: a record before any load balancer"

# --- every credential of the scenario authenticates, in its own project ---
scenario=hack/fidelity/openstack.yaml
[ -f "$scenario" ] || scenario=examples/cloudsim/openstack.yaml
python3 -c 'import sys, yaml
sc = yaml.safe_load(open(sys.argv[1]))
users = {u["name"]: u for u in sc.get("users") or []}
for u in users.values():
    print("password", u["name"], u["password"], u.get("project", "kubernetes"), u.get("domain", "Default"))
for a in sc.get("applicationCredentials") or []:
    u = users.get(a.get("user")) or next(iter(users.values()), {"name": "ccm"})
    print("application_credential", a.get("id") or a["name"], a["secret"], u["name"], u.get("domain", "Default"))
' "$scenario" >"$WORK/credentials"
creds=0
while read -r method ref secret project_or_user domain; do
	creds=$((creds + 1))
	if [ "$method" = password ]; then
		os -o "$WORK/cred.json" --os-username "$ref" --os-password "$secret" --os-project-name "$project_or_user" \
			--os-user-domain-name "$domain" --os-project-domain-name "$domain" token issue -f json
		os -o "$WORK/cred-servers.json" --os-username "$ref" --os-password "$secret" --os-project-name "$project_or_user" \
			--os-user-domain-name "$domain" --os-project-domain-name "$domain" server list -f json
		if [ "$(value "$WORK/cred.json" 'v["project_id"]')" = "$project" ]; then
			expect "$WORK/cred-servers.json" 'len(v) == 3' "$ref: not the three servers of its project"
		else
			expect "$WORK/cred-servers.json" 'v == []' "$ref: another project's servers"
		fi
	else
		id_or_name=(--os-application-credential-name "$ref")
		[[ $ref =~ ^[0-9a-f]{32}$ ]] && id_or_name=(--os-application-credential-id "$ref")
		OS_PASSWORD='' OS_PROJECT_NAME='' OS_PROJECT_DOMAIN_NAME='' os -o "$WORK/cred.json" \
			--os-auth-type v3applicationcredential "${id_or_name[@]}" --os-application-credential-secret "$secret" \
			--os-username "$project_or_user" --os-user-domain-name "$domain" token issue -f json
	fi
	expect "$WORK/cred.json" 'v["id"] and v["project_id"]' "$method $ref: no token"
done <"$WORK/credentials"
[ "$creds" -ge 2 ] || fail "the scenario $scenario has fewer than two credentials to check"

# --- a server task: os-stop, then os-start ---
await_server() { # NAME STATUS: until the server shows STATUS and no task
	for _ in $(seq 60); do
		os -o "$WORK/await.json" server show "$1" -f json
		if [ "$(value "$WORK/await.json" 'v["status"] + "/" + str(v["OS-EXT-STS:task_state"])')" = "$2/None" ]; then
			return
		fi
		sleep 1
	done
	fail "server $1 never got to $2"
}
os server stop worker-1
await_server worker-1 SHUTOFF
os server start worker-1
await_server worker-1 ACTIVE

# --- security group and rule ---
os -o "$WORK/sg.json" security group create fidelity-sg --description "make fidelity" -f json
sg=$(value "$WORK/sg.json" 'v["id"]')
os -o "$WORK/rule.json" security group rule create fidelity-sg --ingress --protocol tcp --dst-port 8080 --remote-ip 10.1.0.0/16 -f json
rule=$(value "$WORK/rule.json" 'v["id"]')
expect "$WORK/rule.json" 'v["port_range_min"] == 8080 and v["remote_ip_prefix"] == "10.1.0.0/16"' "rule create: not the rule asked for"
os -o "$WORK/rules.json" security group rule list fidelity-sg -f json
expect "$WORK/rules.json" "'$rule' in [x['ID'] for x in v] and len(v) == 3" "rule list: not the two egress rules and the new one"
os security group rule delete "$rule"
gone "$rule" security group rule
os security group delete "$sg"
gone "$sg" security group

# --- floating IP ---
os -o "$WORK/fip.json" floating ip create public -f json
fip=$(value "$WORK/fip.json" 'v["id"]')
expect "$WORK/fip.json" 'v["floating_ip_address"].startswith("172.24.4.")' "floating ip create: not from public"
os floating ip delete "$fip"
gone "$fip" floating ip

# --- port ---
os -o "$WORK/port.json" port create --network private fidelity-port -f json
port=$(value "$WORK/port.json" 'v["id"]')
expect "$WORK/port.json" 'v["fixed_ips"][0]["ip_address"].startswith("10.0.")' "port create: no address on private"
os port delete "$port"
gone "$port" port

# --- load balancer tree ---
os -o "$WORK/lb.json" loadbalancer create --name fidelity-lb --vip-subnet-id private-subnet --wait -f json
lb=$(value "$WORK/lb.json" 'v["id"]')
os -o "$WORK/lb-show.json" loadbalancer show "$lb" -f json
expect "$WORK/lb-show.json" 'v["provisioning_status"] == "ACTIVE" and v["vip_address"].startswith("10.0.")' "loadbalancer show: not ACTIVE with a VIP"
os -o "$WORK/lb-stats.json" loadbalancer stats show "$lb" -f json
expect "$WORK/lb-stats.json" 'v["active_connections"] == 0 and v["bytes_in"] == 0 and v["total_connections"] == 0' "loadbalancer stats show"
os -o "$WORK/listener.json" loadbalancer listener create --name fidelity-listener --protocol TCP --protocol-port 80 --wait "$lb" -f json
os -o "$WORK/listener-stats.json" loadbalancer listener stats show fidelity-listener -f json
expect "$WORK/listener-stats.json" 'v["request_errors"] == 0' "listener stats show"
os -o "$WORK/pool.json" loadbalancer pool create --name fidelity-pool --listener fidelity-listener --protocol TCP --lb-algorithm ROUND_ROBIN --wait -f json
os -o "$WORK/member.json" loadbalancer member create --name fidelity-member --subnet-id private-subnet --address 10.0.0.2 --protocol-port 30080 --wait fidelity-pool -f json
os -o "$WORK/hm.json" loadbalancer healthmonitor create --name fidelity-hm --type TCP --delay 5 --timeout 3 --max-retries 1 --wait fidelity-pool -f json
os -o "$WORK/members.json" loadbalancer member list fidelity-pool -f json
expect "$WORK/members.json" "[x['address'] for x in v] == ['10.0.0.2'] and v[0]['provisioning_status'] == 'ACTIVE'" "member list"
os -o "$WORK/status.json" loadbalancer status show "$lb"
expect "$WORK/status.json" 'v["loadbalancer"]["listeners"][0]["pools"][0]["members"][0]["address"] == "10.0.0.2"' "loadbalancer status show: not the tree"
os -o "$WORK/lbs2.json" loadbalancer list -f json
expect "$WORK/lbs2.json" "[x['name'] for x in v] == ['fidelity-lb'] and v[0]['provisioning_status'] == 'ACTIVE'" "loadbalancer list"
os -o "$WORK/lbquotas2.json" loadbalancer quota list -f json
expect "$WORK/lbquotas2.json" "[x['project_id'] for x in v] == ['$project']" "loadbalancer quota list: no record after a load balancer"
os loadbalancer delete --cascade --wait "$lb"
gone "$lb" loadbalancer
os -o "$WORK/lbs3.json" loadbalancer list -f json
expect "$WORK/lbs3.json" 'v == []' "loadbalancer list after the cascade delete: not empty"
os -o "$WORK/ports2.json" port list -f json
expect "$WORK/ports2.json" "not any('octavia-lb-' in x['Name'] for x in v)" "the load balancer's VIP port is left"

# --- Cinder volume, Nova volume attachment, snapshot ---
await_status() { # KIND... NAME STATUS: until KIND show NAME says STATUS
	local want=${*: -1} name=${*: -2:1} kind=("${@:1:$#-2}")
	for _ in $(seq 60); do
		os -o "$WORK/await-status.json" "${kind[@]}" show "$name" -f json
		if [ "$(value "$WORK/await-status.json" 'v["status"]')" = "$want" ]; then
			return
		fi
		sleep 1
	done
	fail "${kind[*]} $name never got to $want"
}
os -o "$WORK/az-volume.json" availability zone list --volume -f json
expect "$WORK/az-volume.json" "['nova'] == [x['Zone Name'] for x in v] and v[0]['Zone Status'] == 'available'" "volume zones: not nova"
os -o "$WORK/vtypes.json" volume type list -f json
expect "$WORK/vtypes.json" "'__DEFAULT__' in $names" "volume type list: no __DEFAULT__ type"
os -o "$WORK/vol.json" volume create --size 1 --description "make fidelity" fidelity-vol -f json
vol=$(value "$WORK/vol.json" 'v["id"]')
expect "$WORK/vol.json" 'v["size"] == 1 and v["status"] == "creating" and v["type"] == "__DEFAULT__" and v["availability_zone"] == "nova"' \
	"volume create: not a 1 GiB __DEFAULT__ volume being created in nova"
await_status volume fidelity-vol available
os -o "$WORK/vols.json" volume list -f json
expect "$WORK/vols.json" "[x['ID'] for x in v] == ['$vol'] and v[0]['Status'] == 'available'" "volume list: not the new volume"
os volume set --size 2 fidelity-vol
await_status volume fidelity-vol available
os -o "$WORK/vol-2.json" volume show fidelity-vol -f json
expect "$WORK/vol-2.json" 'v["size"] == 2' "volume set --size 2: not extended"
os -o "$WORK/attach.json" server add volume worker-1 fidelity-vol -f json
expect "$WORK/attach.json" 'v["Device"] == "/dev/vdb" and v["Volume ID"] == "'"$vol"'"' "server add volume: not /dev/vdb"
await_status volume fidelity-vol in-use
os -o "$WORK/vol-inuse.json" volume show fidelity-vol -f json
worker1=$(value "$WORK/servers.json" '[x["ID"] for x in v if x["Name"] == "worker-1"][0]')
expect "$WORK/vol-inuse.json" 'v["attachments"][0]["server_id"] == "'"$worker1"'" and v["attachments"][0]["device"] == "/dev/vdb"' \
	"volume show: not attached to worker-1 as /dev/vdb"
os -o "$WORK/server-vol.json" server show worker-1 -f json
expect "$WORK/server-vol.json" "'$vol' in json.dumps(v['volumes_attached'])" "server show worker-1: the volume is not in volumes_attached"
os -o "$WORK/snap.json" volume snapshot create --volume fidelity-vol --force fidelity-snap -f json
snap=$(value "$WORK/snap.json" 'v["id"]')
expect "$WORK/snap.json" 'v["size"] == 2 and v["status"] == "creating" and v["volume_id"] == "'"$vol"'"' "volume snapshot create: not a snapshot being made"
await_status volume snapshot fidelity-snap available
os -o "$WORK/snaps.json" volume snapshot list -f json
expect "$WORK/snaps.json" "[x['ID'] for x in v] == ['$snap']" "volume snapshot list: not the snapshot"
os -o "$WORK/restored.json" volume create --snapshot fidelity-snap --size 3 fidelity-restored -f json
restored=$(value "$WORK/restored.json" 'v["id"]')
expect "$WORK/restored.json" 'v["snapshot_id"] == "'"$snap"'" and v["size"] == 3' "volume create --snapshot: not from the snapshot"
await_status volume fidelity-restored available
os server remove volume worker-1 fidelity-vol
await_status volume fidelity-vol available
os -o "$WORK/vol-detached.json" volume show fidelity-vol -f json
expect "$WORK/vol-detached.json" 'v["attachments"] == []' "server remove volume: still attached"
if openstack volume delete fidelity-vol >"$WORK/refused" 2>&1; then
	fail "volume delete: a volume with a snapshot was deleted"
fi
n=$((n + 1))
grep -q 'have snapshots' "$WORK/refused" || {
	cat "$WORK/refused" >&2
	fail "volume delete of a volume with a snapshot: not Cinder's answer"
}
os volume snapshot delete fidelity-snap
for _ in $(seq 60); do
	openstack volume snapshot show "$snap" >/dev/null 2>&1 || break
	sleep 1
done
gone "$snap" volume snapshot
os volume delete fidelity-vol fidelity-restored
for id in "$vol" "$restored"; do
	for _ in $(seq 60); do
		openstack volume show "$id" >/dev/null 2>&1 || break
		sleep 1
	done
	gone "$id" volume
done
os -o "$WORK/vols2.json" volume list -f json
expect "$WORK/vols2.json" 'v == []' "volume list after the deletes: not empty"

echo "openstack fidelity: ok ($n commands)"
