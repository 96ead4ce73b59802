package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/internal/cluster"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
)

// testDigitalOceanPublicAccessFirewall runs the real
// digitalocean-cloud-controller-manager, with its shipped RBAC, against a
// real kube-apiserver and dosim. With --controllers=*,-public-access-firewall
// it leaves firewalls alone; with PUBLIC_ACCESS_FIREWALL_NAME and _TAGS
// set, a NodePort Service's port is opened in the firewall it creates and
// closed again when the Service is deleted.
func testDigitalOceanPublicAccessFirewall(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	const name, tag = "k8s-public-access", "k8s-worker"
	api := simClient(t, c)
	if _, _, err := api.Tags.Create(t.Context(), &godo.TagCreateRequest{Name: tag}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PUBLIC_ACCESS_FIREWALL_NAME": name, "PUBLIC_ACCESS_FIREWALL_TAGS": tag}

	// Turned off by --controllers: not one firewall call.
	off, err := c.StartCCMWithEnv("ccm-firewall-off", env, "--controllers=*,-"+digitalocean.FirewallControllerName)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the CCM to report the controller disabled", func(context.Context) (bool, error) {
		return strings.Contains(off.Log(), fmt.Sprintf("%q is disabled", digitalocean.FirewallControllerName)), nil
	})
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: c.Namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
	svc, err = c.Kube.CoreV1().Services(c.Namespace).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	consistently(t, 2*time.Second, "no firewall call with the controller off", func(context.Context) error {
		for op, n := range c.Sim.Stats() {
			if strings.Contains(op, "/v2/firewalls") {
				return fmt.Errorf("%d requests %s", n, op)
			}
		}
		return nil
	})
	off.Stop()

	on, err := c.StartCCMWithEnv("ccm", env)
	if err != nil {
		t.Fatal(err)
	}
	nodePort := fmt.Sprint(svc.Spec.Ports[0].NodePort)
	var fw godo.Firewall
	eventually(t, 30*time.Second, "the firewall opening NodePort "+nodePort, func(ctx context.Context) (bool, error) {
		var err error
		fw, err = theFirewall(ctx, api, name)
		return err == nil && slices.Equal(inbound(fw), []string{"tcp:" + nodePort + " 0.0.0.0/0,::/0"}), err
	})
	if !slices.Equal(fw.Tags, []string{tag}) {
		t.Errorf("firewall tags %v, want [%s]", fw.Tags, tag)
	}

	if err := c.Kube.CoreV1().Services(c.Namespace).Delete(t.Context(), svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "NodePort "+nodePort+" closed", func(ctx context.Context) (bool, error) {
		got, err := theFirewall(ctx, api, name)
		return err == nil && got.ID == fw.ID && len(got.InboundRules) == 0, err
	})
	for line := range strings.Lines(on.Log()) {
		if strings.Contains(line, "forbidden") {
			t.Errorf("the CCM was refused something its RBAC should allow: %s", line)
		}
	}
}

// simClient is a godo client for the cluster's simulated DigitalOcean.
func simClient(t *testing.T, c *cluster.Cluster) *godo.Client {
	t.Helper()
	env := c.Sim.Env()
	u, err := url.Parse(env["DO_OVERRIDE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	token := env["DO_ACCESS_TOKEN"]
	hc := cloudapi.WithBearerToken(&http.Client{Timeout: 10 * time.Second}, u.Host, func() (string, error) { return token, nil })
	api, err := godo.New(hc, godo.SetBaseURL(u.String()+"/"))
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// theFirewall returns the one firewall called name.
func theFirewall(ctx context.Context, api *godo.Client, name string) (godo.Firewall, error) {
	fws, _, err := api.Firewalls.List(ctx, &godo.ListOptions{PerPage: 200})
	if err != nil {
		return godo.Firewall{}, err
	}
	var found []godo.Firewall
	for _, fw := range fws {
		if fw.Name == name {
			found = append(found, fw)
		}
	}
	if len(found) != 1 {
		return godo.Firewall{}, fmt.Errorf("%d firewalls called %s", len(found), name)
	}
	return found[0], nil
}

// inbound renders a firewall's inbound rules as "tcp:30080 <addresses>".
func inbound(fw godo.Firewall) []string {
	var out []string
	for _, r := range fw.InboundRules {
		var addrs []string
		if r.Sources != nil {
			addrs = r.Sources.Addresses
		}
		out = append(out, fmt.Sprintf("%s:%s %s", r.Protocol, r.PortRange, strings.Join(addrs, ",")))
	}
	return out
}
