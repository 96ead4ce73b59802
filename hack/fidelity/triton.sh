#!/usr/bin/env bash
# hack/fidelity/triton.sh: drive tritonsim with Joyent's own CLI,
# node-triton (npm package "triton"), unchanged (make fidelity;
# hack/fidelity.sh starts cmd/cloudsim on hack/fidelity/triton.yaml and
# exports what it prints: TRITON_URL, TRITON_ACCOUNT, TRITON_KEY_ID,
# TRITON_KEY_MATERIAL, TRITON_CMON_URL...).
#
# node-triton is installed at the pinned version from npm into
# $FIDELITY_TOOLS/node-triton. It finds its key in an ssh-agent the script
# starts (and stops) with the account key, and in $HOME/.ssh, HOME being
# $WORK/home. The profile is the environment: TRITON_URL, TRITON_ACCOUNT,
# TRITON_KEY_ID. It then runs a read and write workflow: info, account
# get and limits, keys (list, get, add, delete), networks, VLANs,
# packages, images, datacenters, services (CMON's URL answers), instances
# (list, get, create --wait, stop/start/reboot/rename/resize/
# enable-firewall/disable-firewall/deletion protection --wait, tags and
# metadata --wait, audit, nics, delete --wait), firewall rules (create
# with --log, list, get, enable, disable, update, instances, delete), and
# the same reads signed with the scenario's RSA, ECDSA and Ed25519 keys.
# Any unexpected answer fails the run.
set -euo pipefail

: "${FIDELITY_TOOLS:?}" "${WORK:?}" "${TRITON_URL:?}" "${TRITON_ACCOUNT:?}" "${TRITON_KEY_ID:?}" "${TRITON_KEY_MATERIAL:?}"
TRITON_VERSION=7.17.0

dir=$FIDELITY_TOOLS/node-triton
triton=$dir/node_modules/.bin/triton
if ! [ -x "$triton" ] || ! "$triton" --version 2>/dev/null | grep -q "^Triton CLI $TRITON_VERSION\$"; then
	command -v npm >/dev/null || { echo "skipped: npm is not installed"; exit 0; }
	echo "installing node-triton $TRITON_VERSION into $dir"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "triton@$TRITON_VERSION" >/dev/null
fi

fail() { echo "triton: FAIL: $*" >&2; exit 1; }
# t runs node-triton against the simulator, with the profile from the
# environment and no terminal to prompt on.
t() { "$triton" "$@" </dev/null; }
# expect WHAT WANT GOT fails unless GOT equals WANT.
expect() { [ "$3" == "$2" ] || fail "$1: got [$3], want [$2]"; }
# json_check SCRIPT: runs a python3 expression over the JSON on stdin,
# bound to d; it prints what it checks and exits 1 when it is false.
# list_check SCRIPT: the same over the objects of a -j list (one JSON
# object a line), d being their list.
json_check() { check json "$1"; }
list_check() { check list "$1"; }
check() {
	python3 -c '
import json, sys
kind, expr = sys.argv[1:3]
text = sys.stdin.read().strip()
if kind == "json":
    d = json.loads(text)
else:
    d = [json.loads(line) for line in text.splitlines() if line.strip()]
    if len(d) == 1 and isinstance(d[0], list):
        d = d[0]
ok = bool(eval(expr))
print("  check:", expr, "->", ok)
sys.exit(0 if ok else 1)' "$1" "$2" || fail "check $2"
}
# field JSON-PATH: prints a field of the JSON object on stdin.
field() { python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval("d" + sys.argv[1]))' "$1"; }

export HOME=$WORK/home
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME/.ssh"
eval "$(ssh-agent -s)" >/dev/null
trap 'kill "$SSH_AGENT_PID" 2>/dev/null || true' EXIT
ssh-add -q "$TRITON_KEY_MATERIAL"
unset TRITON_PROFILE SDC_URL SDC_ACCOUNT SDC_KEY_ID

echo "$("$triton" --version | head -1) against $TRITON_URL"

echo "--- info, account, limits"
t info | grep -q "^login: $TRITON_ACCOUNT\$" || fail "triton info does not give login $TRITON_ACCOUNT"
t info | grep -q "^instances: 4\$" || fail "triton info does not count 4 instances"
t account get -j | json_check "d['login'] == '$TRITON_ACCOUNT' and d['triton_cns_enabled'] is True"
# node-triton shows each limit's by as type and value as limit.
t account limits -j | json_check "sorted((l['type'], l['limit'], l['used']) for l in d) == [('machines', 50, 4), ('ram', 204800, 13312)]"

echo "--- keys"
t key list -j | list_check "[k['name'] for k in d] == ['ccm', 'rsa', 'ecdsa', 'ed25519'] and d[0]['fingerprint'] == '$TRITON_KEY_ID'"
expect "key get by name" "$TRITON_KEY_ID" "$(t key get -j ccm | field "['fingerprint']")"
ssh-keygen -q -t ed25519 -N '' -C fidelity -f "$WORK/added" </dev/null
t key add -n added "$WORK/added.pub" >/dev/null
expect "added key's fingerprint" "$(ssh-keygen -l -E md5 -f "$WORK/added.pub" | awk '{print $2}' | sed 's/^MD5://')" "$(t key get -j added | field "['fingerprint']")"
t key delete -y added >/dev/null
if t key get added >/dev/null 2>&1; then fail "key added still there after delete"; fi

echo "--- networks, VLANs, packages, images, datacenters, services"
t network list -j | list_check "[n['name'] for n in d] == ['Joyent-SDC-Public', 'My-Fabric-Network'] and d[0]['public'] and d[1]['fabric']"
t network get -j My-Fabric-Network | json_check "d['vlan_id'] == 2 and d['internet_nat'] is True"
t vlan list -j | list_check "[v['vlan_id'] for v in d] == [2]"
t package list -j | list_check "sorted(p['name'] for p in d) == ['g4-general-8G', 'g4-highcpu-1G', 'g4-highcpu-2G', 'g4-highcpu-4G']"
t package get -j g4-highcpu-2G | json_check "d['memory'] == 2048"
t image list -j | list_check "sorted(i['name'] for i in d) == ['base-64-lts', 'cloud-load-balancer']"
t image get -j base-64-lts | json_check "d['os'] == 'smartos' and d['state'] == 'active'"
t datacenters -j | json_check "d == {'us-east-1': '$TRITON_URL'}"
t services -j | json_check "d['cloudapi'] == '$TRITON_URL' and d['cmon'].startswith('https://')"
cmon=$(t services -j | field "['cmon']")
if [ -n "${TRITON_CMON_URL:-}" ]; then
	expect "services: cmon" "$TRITON_CMON_URL" "$cmon"
	# CMON asks for a client certificate and refuses a request without one.
	expect "CMON without a certificate" 401 "$(curl -s -o /dev/null -w '%{http_code}' --cacert "${TRITON_CMON_CA_FILE:?}" "$cmon/v1/discover" || true)"
fi

echo "--- instances"
t instance list -j | list_check "sorted(m['name'] for m in d) == ['lb-web', 'worker-1', 'worker-2', 'worker-3']"
t instance get -j worker-3 | json_check "d['state'] == 'stopped' and d['package'] == 'g4-highcpu-4G'"
t instance get -j lb-web | json_check "d['firewall_enabled'] is True and d['metadata']['cloud.tritoncompute:loadbalancer'] == 'true'"
t instance nic list -j worker-1 | list_check "len(d) == 2 and sum(1 for n in d if n['primary']) == 1"
t instance ip worker-1 | grep -q '^198\.18\.' || fail "worker-1's IP is not on the public network"

t instance create -w -j -n fid-1 -t role=fidelity -m note=hello base-64-lts g4-highcpu-1G | tail -1 |
	json_check "d['name'] == 'fid-1' and d['state'] == 'running' and d['tags'] == {'role': 'fidelity'} and d['metadata'] == {'note': 'hello'}"
id=$(t instance get -j fid-1 | field "['id']")
t instance stop -w fid-1 >/dev/null
expect "state after stop --wait" stopped "$(t instance get -j fid-1 | field "['state']")"
t instance start -w fid-1 >/dev/null
expect "state after start --wait" running "$(t instance get -j fid-1 | field "['state']")"
t instance reboot -w fid-1 >/dev/null
t instance rename -w fid-1 fid-2 >/dev/null
expect "name after rename --wait" fid-2 "$(t instance get -j "$id" | field "['name']")"
t instance resize -w fid-2 g4-highcpu-2G >/dev/null
t instance get -j fid-2 | json_check "d['package'] == 'g4-highcpu-2G' and d['memory'] == 2048"
t instance enable-firewall -w fid-2 >/dev/null
expect "firewall after enable-firewall --wait" True "$(t instance get -j fid-2 | field "['firewall_enabled']")"
t instance disable-firewall -w fid-2 >/dev/null
expect "firewall after disable-firewall --wait" False "$(t instance get -j fid-2 | field "['firewall_enabled']")"
t instance enable-deletion-protection -w fid-2 >/dev/null
if t instance delete -f fid-2 >/dev/null 2>&1; then fail "deleted an instance under deletion protection"; fi
t instance disable-deletion-protection -w fid-2 >/dev/null
t instance tag set -w fid-2 tier=web count=3 >/dev/null
t instance tag list fid-2 | json_check "d == {'role': 'fidelity', 'tier': 'web', 'count': 3}"
t instance tag delete -w fid-2 tier >/dev/null
t instance tag replace-all -w fid-2 only=this >/dev/null
t instance tag list fid-2 | json_check "d == {'only': 'this'}"
t instance metadata set -w fid-2 color=blue >/dev/null
t instance metadata get fid-2 color | grep -q '^blue$' || fail "metadata color is not blue"
t instance metadata delete -f -w fid-2 note >/dev/null
t instance metadata delete -f -w -a fid-2 >/dev/null
t instance metadata list fid-2 | json_check "d == {}"
t instance audit -j fid-2 | list_check "[a['action'] for a in sorted(d, key=lambda a: a['time'])] == ['provision', 'stop', 'start', 'reboot', 'rename', 'resize', 'unknown', 'unknown', 'enable_deletion_protection', 'disable_deletion_protection', 'set_tags', 'remove_tags', 'replace_tags', 'set_metadata', 'remove_metadata', 'replace_metadata'] and all(a['success'] == 'yes' for a in d)"
t instance delete -f -w fid-2 >/dev/null
# CloudAPI answers 410 with the machine, which node-triton prints before
# it fails with InstanceDeleted.
{ t instance get -j "$id" 2>"$WORK/deleted.err" || true; } | json_check "d['state'] == 'deleted'"
grep -q InstanceDeleted "$WORK/deleted.err" || fail "instance get of a deleted instance: $(cat "$WORK/deleted.err")"
t instance list -j | list_check "'fid-2' not in [m['name'] for m in d]"

echo "--- firewall rules"
t fwrule list -j | list_check "len(d) == 1 and d[0]['enabled'] and d[0]['log'] is False"
rule=$(t fwrule create -l -D fidelity 'FROM any TO tag "role" = "web" ALLOW tcp (PORT 443 AND PORT 80)' | sed -n 's/^Created firewall rule //p')
[ -n "$rule" ] || fail "fwrule create gave no rule ID"
t fwrule get -j "$rule" | json_check "d['rule'] == 'FROM any TO tag \"role\" = \"web\" ALLOW tcp (PORT 80 AND PORT 443)' and d['enabled'] and d['log'] is True and d['description'] == 'fidelity'"
t fwrule disable "$rule" >/dev/null
expect "rule after disable" False "$(t fwrule get -j "$rule" | field "['enabled']")"
t fwrule enable "$rule" >/dev/null
t fwrule update "$rule" log=false description=changed >/dev/null
t fwrule get -j "$rule" | json_check "d['enabled'] and d['log'] is False and d['description'] == 'changed'"
t fwrule instances -j "$rule" | list_check "d == []"
t instance fwrules -j worker-1 | list_check "len(d) == 1"
t fwrule delete -f "$rule" >/dev/null
t fwrule list -j | list_check "len(d) == 1"

echo "--- other key types"
fps=()
for name in rsa ecdsa ed25519; do
	file=${TRITON_KEY_MATERIAL%.pem}-$name.pem
	fp=$(ssh-keygen -l -E md5 -f "$file" | awk '{print $2}' | sed 's/^MD5://')
	ssh-add -q "$file"
	TRITON_KEY_ID=$fp t account get -j | json_check "d['login'] == '$TRITON_ACCOUNT'"
	expect "instances signed with the $name key" 4 "$(TRITON_KEY_ID=$fp t instance list -H -o name | wc -l)"
	TRITON_KEY_ID=$fp t instance tag set -w worker-2 "signed-by=$name" >/dev/null
	fps+=("'$fp'")
done
t instance tag list worker-2 | json_check "d['signed-by'] == 'ed25519'"
# Each tag change's audit record names the key that signed it.
t instance audit -j worker-2 | list_check "[a['caller']['keyId'] for a in sorted(d, key=lambda a: a['time'])] == ['/$TRITON_ACCOUNT/keys/' + fp for fp in [$(IFS=,; echo "${fps[*]}")]]"

echo "triton: ok"
