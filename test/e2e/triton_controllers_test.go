package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	triton "github.com/joyent/triton-go"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// tritonAPI returns triton-go clients signing with the simulator's account
// key, as a user's tools would.
func tritonAPI(t *testing.T, c *cluster.Cluster) (*compute.ComputeClient, *network.NetworkClient) {
	t.Helper()
	env := c.Sim.Env()
	signer, err := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
		KeyID: env["TRITON_KEY_ID"], PrivateKeyMaterial: []byte(env["TRITON_KEY_MATERIAL"]), AccountName: env["TRITON_ACCOUNT"],
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &triton.ClientConfig{TritonURL: env["TRITON_URL"], AccountName: env["TRITON_ACCOUNT"], Signers: []authentication.Signer{signer}}
	cc, err := compute.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := network.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cc, nc
}

// rulesByDescription returns the account's firewall rules whose
// description starts with prefix, by description.
func rulesByDescription(ctx context.Context, nc *network.NetworkClient, prefix string) (map[string]*network.FirewallRule, error) {
	rules, err := nc.Firewall().ListRules(ctx, &network.ListRulesInput{})
	if err != nil {
		return nil, err
	}
	out := map[string]*network.FirewallRule{}
	for _, r := range rules {
		if strings.HasPrefix(r.Description, prefix) {
			out[r.Description] = r
		}
	}
	return out, nil
}

// testTritonFirewall: with the firewall controller on (the default), the
// account holds the cluster-wide rules and the appliance's rule; a
// user-written rule is never touched; changing the Service's
// loadBalancerSourceRanges rewrites only its appliance's rule; an idle
// cluster makes no write (the controller resyncs every 2s here).
func testTritonFirewall(t *testing.T, c *cluster.Cluster, svc *corev1.Service) (userRuleID string) {
	_, nc := tritonAPI(t, c)
	user, err := nc.Firewall().CreateRule(t.Context(), &network.CreateRuleInput{
		Enabled: true, Rule: "FROM any TO all vms ALLOW tcp PORT 22", Description: "ssh for the admins",
	})
	if err != nil {
		t.Fatal(err)
	}
	const ours = "k8s-ccm:ccmkit:"
	var before map[string]*network.FirewallRule
	eventually(t, 60*time.Second, "the cluster-wide rules and the appliance's rule", func(ctx context.Context) (bool, error) {
		before, err = rulesByDescription(ctx, nc, ours)
		if err != nil {
			return false, err
		}
		var fw, lb int
		for d, r := range before {
			switch {
			case strings.HasPrefix(d, ours+"fw:") && strings.Contains(r.Rule, `tag "k8s-cluster" = "ccmkit"`):
				fw++
			case strings.HasPrefix(d, ours+"lb:") && strings.Contains(r.Rule, "FROM any") && strings.Contains(r.Rule, "PORT 80"):
				lb++
			}
		}
		if fw != 3 || lb != 1 || len(before) != 4 {
			return false, fmt.Errorf("rules %v", ruleTexts(before))
		}
		return true, nil
	})

	writes := c.Sim.Writes()
	consistently(t, 5*time.Second, "an idle cluster makes no write", func(context.Context) error {
		if w := c.Sim.Writes(); w != writes {
			return fmt.Errorf("%d writes", w-writes)
		}
		return nil
	})

	patch := `{"spec":{"loadBalancerSourceRanges":["203.0.113.0/24"]}}`
	if _, err := c.Kube.CoreV1().Services(svc.Namespace).Patch(t.Context(), svc.Name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "only the appliance's rule rewritten for the source range", func(ctx context.Context) (bool, error) {
		after, err := rulesByDescription(ctx, nc, ours)
		if err != nil {
			return false, err
		}
		for d, r := range after {
			b := before[d]
			switch {
			case b == nil:
				return false, fmt.Errorf("new rule %s: %s", d, r.Rule)
			case strings.HasPrefix(d, ours+"lb:"):
				if !strings.Contains(r.Rule, "203.0.113.0/24") || strings.Contains(r.Rule, "FROM any") {
					return false, fmt.Errorf("appliance rule %s", r.Rule)
				}
			case r.ID != b.ID || r.Rule != b.Rule:
				return false, fmt.Errorf("cluster rule %s changed: %s", d, r.Rule)
			}
		}
		return len(after) == len(before), nil
	})
	return user.ID
}

// tritonRulesAfterDelete: the deleted Service's appliance rule is gone, the
// cluster-wide rules and the user's rule are there.
func tritonRulesAfterDelete(t *testing.T, c *cluster.Cluster, userRuleID string) {
	_, nc := tritonAPI(t, c)
	eventually(t, 60*time.Second, "no appliance rule left, the user's kept", func(ctx context.Context) (bool, error) {
		rules, err := rulesByDescription(ctx, nc, "")
		if err != nil {
			return false, err
		}
		user := false
		for d, r := range rules {
			if strings.HasPrefix(d, "k8s-ccm:ccmkit:lb:") {
				return false, fmt.Errorf("appliance rule left: %s", r.Rule)
			}
			user = user || r.ID == userRuleID
		}
		if !user {
			return false, fmt.Errorf("the user's rule is gone: %v", ruleTexts(rules))
		}
		return true, nil
	})
}

func ruleTexts(rules map[string]*network.FirewallRule) []string {
	var out []string
	for d, r := range rules {
		out = append(out, d+": "+r.Rule)
	}
	slices.Sort(out)
	return out
}

// testTritonCMON: the metrics controller's Secret holds a client
// certificate that CMON's discovery (tritonsim's, which checks it against
// the account's keys) accepts, and discovery of the cluster's group lists
// exactly the nodes; the ConfigMap holds a triton_sd_configs job for that
// group (hack/promcheck loads the same job with Prometheus's own loader).
func testTritonCMON(t *testing.T, c *cluster.Cluster, ids map[string]string) {
	cc, _ := tritonAPI(t, c)
	services, err := cc.Services().List(t.Context(), &compute.ListServicesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var endpoint string
	for _, s := range services {
		if s.Name == "cmon" {
			endpoint = s.Endpoint
		}
	}
	if endpoint == "" {
		t.Fatalf("CloudAPI lists no cmon service: %+v", services)
	}
	var secret *corev1.Secret
	eventually(t, 60*time.Second, "the CMON client certificate Secret", func(ctx context.Context) (bool, error) {
		secret, err = c.Kube.CoreV1().Secrets("kube-system").Get(ctx, "triton-cmon-client", metav1.GetOptions{})
		return err == nil, err
	})
	cert, err := tls.X509KeyPair(secret.Data["tls.crt"], secret.Data["tls.key"])
	if err != nil {
		t.Fatalf("the Secret's certificate: %v", err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert},
		// The simulator's own server certificate; what is under test is
		// the client certificate.
		InsecureSkipVerify: true,
	}}}
	want := slices.Sorted(func(yield func(string) bool) {
		for _, id := range ids {
			if !yield(id) {
				return
			}
		}
	})
	eventually(t, 60*time.Second, "CMON discovery of the cluster's group listing exactly the nodes", func(ctx context.Context) (bool, error) {
		got, err := cmonDiscover(ctx, client, endpoint, "k8s-ccmkit")
		if err != nil {
			return false, err
		}
		if !slices.Equal(got, want) {
			return false, fmt.Errorf("discovered %v, want %v", got, want)
		}
		return true, nil
	})
	var cm *corev1.ConfigMap
	eventually(t, 60*time.Second, "the Prometheus scrape job ConfigMap", func(ctx context.Context) (bool, error) {
		cm, err = c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "triton-cmon-prometheus", metav1.GetOptions{})
		return err == nil, err
	})
	var job string
	for _, v := range cm.Data {
		job += v
	}
	if !strings.Contains(job, "triton_sd_configs") || !strings.Contains(job, "k8s-ccmkit") {
		t.Errorf("ConfigMap holds no triton_sd_configs job for the cluster's group:\n%s", job)
	}
}

// cmonDiscover asks CMON which machines are in group, sorted.
func cmonDiscover(ctx context.Context, client *http.Client, endpoint, group string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/v1/discover?groups="+group, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("CMON discovery: %s", resp.Status)
	}
	var out struct {
		Containers []struct {
			VMUUID string `json:"vm_uuid"`
		} `json:"containers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range out.Containers {
		ids = append(ids, c.VMUUID)
	}
	slices.Sort(ids)
	return ids, nil
}

// tritonControllersOff: with --controllers=*,-triton-firewall,-triton-cmon
// the CCM reports both off and makes no firewall call and no CMON write.
func tritonControllersOff(t *testing.T, c *cluster.Cluster, env map[string]string) {
	off, err := c.StartCCMWithOnlyEnv("ccm-controllers-off", env, "--controllers=*,-triton-firewall,-triton-cmon")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the CCM to report both controllers disabled", func(context.Context) (bool, error) {
		log := off.Log()
		return strings.Contains(log, `"triton-firewall" is disabled`) && strings.Contains(log, `"triton-cmon" is disabled`), nil
	})
	id, err := c.AddNode(t.Context(), "off-0", heartbeat)
	if err != nil {
		t.Fatal(err)
	}
	consistently(t, 3*time.Second, "no firewall or CMON call with both off", func(ctx context.Context) error {
		for op, n := range c.Sim.Stats() {
			if strings.Contains(op, "fwrules") || strings.Contains(op, "services") {
				return fmt.Errorf("%d requests %s", n, op)
			}
		}
		if _, err := c.Kube.CoreV1().Secrets("kube-system").Get(ctx, "triton-cmon-client", metav1.GetOptions{}); err == nil {
			return errors.New("the CMON Secret exists")
		}
		return nil
	})
	off.Stop()
	c.Kubelet("off-0").Stop()
	if err := c.Kube.CoreV1().Nodes().Delete(t.Context(), "off-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Sim.DeleteInstance(id)
}
