package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/digitalocean/godo"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// What examples/services/digitalocean/ names in the cloud: the seed
// creates them with these IDs.
const (
	doExampleCertificateID = "8b4e3c9a-2f61-4d7e-9a35-0c1f7e2d6b48"
	doExampleAdoptedLBID   = "5f0c8e2a-7d31-4b96-8e4f-2a9d1c6b3e70"
	doExampleAdoptedLBName = "existing-lb"
)

func init() { registerExamples("digitalocean", digitalOceanExamples) }

// digitalOceanExamples checks each DigitalOcean example through godo
// against dosim.
func digitalOceanExamples() examplesCloud {
	var api *godo.Client
	// lb reads the example's load balancer through godo.
	lb := func(ctx context.Context, ex exampleState) (*godo.LoadBalancer, error) {
		got, _, err := api.LoadBalancers.Get(ctx, ex.LB.ID)
		return got, err
	}
	return examplesCloud{
		StartCloud: func(o simkit.Common) simkit.Cloud { return dosim.StartCloud(o) },
		Seed: func(t *testing.T, run *examplesRun) {
			api = simClient(t, run.Cluster)
			do := run.Cloud.(*dosim.Cloud)
			do.AddCertificate(dosim.Certificate{ID: doExampleCertificateID, Name: "example", DNSNames: []string{"example.com"}})
			do.AddLoadBalancer(dosim.LoadBalancer{
				ID: doExampleAdoptedLBID, Name: doExampleAdoptedLBName,
				ForwardingRules: []dosim.ForwardingRule{{EntryProtocol: "http", EntryPort: 8000, TargetProtocol: "http", TargetPort: 31999}},
			})
		},
		Checks: map[string]exampleCheck{
			"tcp.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				return doRules(ctx, lb, run, ex, "tcp:80->tcp")
			},
			"udp.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				return doRules(ctx, lb, run, ex, "udp:53->udp")
			},
			"http.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if err := doRules(ctx, lb, run, ex, "http:80->http"); err != nil {
					return err
				}
				got, err := lb(ctx, ex)
				if err != nil {
					return err
				}
				if s := got.StickySessions; s == nil || s.Type != "cookies" || s.CookieName != "example" || s.CookieTtlSeconds != 300 {
					return fmt.Errorf("sticky sessions %+v, want cookies called example for 300s", s)
				}
				return nil
			},
			"https.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if err := doRules(ctx, lb, run, ex, "http:80->http", "https:443->http cert "+doExampleCertificateID); err != nil {
					return err
				}
				got, err := lb(ctx, ex)
				if err != nil {
					return err
				}
				if !got.RedirectHttpToHttps {
					return fmt.Errorf("redirect_http_to_https is off")
				}
				return nil
			},
			"proxy-protocol.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if err := doRules(ctx, lb, run, ex, "tcp:80->tcp"); err != nil {
					return err
				}
				got, err := lb(ctx, ex)
				if err != nil {
					return err
				}
				if !got.EnableProxyProtocol {
					return fmt.Errorf("enable_proxy_protocol is off")
				}
				return ingressIPMode(ex.Service, corev1.LoadBalancerIPModeProxy)
			},
			"source-ranges.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if err := doRules(ctx, lb, run, ex, "tcp:80->tcp"); err != nil {
					return err
				}
				got, err := lb(ctx, ex)
				if err != nil {
					return err
				}
				want := []string{"cidr:198.51.100.7/32", "cidr:203.0.113.0/24"}
				if got.Firewall == nil || !slices.Equal(slices.Sorted(slices.Values(got.Firewall.Allow)), want) || len(got.Firewall.Deny) != 0 {
					return fmt.Errorf("firewall %+v, want allow %v and no deny", got.Firewall, want)
				}
				return nil
			},
			"etp-local.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if err := doRules(ctx, lb, run, ex, "tcp:80->tcp"); err != nil {
					return err
				}
				got, err := lb(ctx, ex)
				if err != nil {
					return err
				}
				hc, port := got.HealthCheck, int(ex.Service.Spec.HealthCheckNodePort)
				if port == 0 || hc == nil || hc.Protocol != "http" || hc.Port != port || hc.Path != "/healthz" {
					return fmt.Errorf("health check %+v, want http on the healthCheckNodePort %d, /healthz", hc, port)
				}
				return nil
			},
			"internal.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if err := doRules(ctx, lb, run, ex, "tcp:80->tcp"); err != nil {
					return err
				}
				got, err := lb(ctx, ex)
				if err != nil {
					return err
				}
				if got.Network != "INTERNAL" || got.IPv6 != "" || !isPrivateIP(got.IP) {
					return fmt.Errorf("network %q with addresses %q %q, want INTERNAL with a private IPv4 only", got.Network, got.IP, got.IPv6)
				}
				return nil
			},
			"adopt-existing.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if ex.LB.ID != doExampleAdoptedLBID || ex.LB.Name != doExampleAdoptedLBName {
					return fmt.Errorf("load balancer %s called %s, want the adopted %s called %s", ex.LB.ID, ex.LB.Name, doExampleAdoptedLBID, doExampleAdoptedLBName)
				}
				return doRules(ctx, lb, run, ex, "tcp:80->tcp")
			},
		},
	}
}

// doRules checks that the example's load balancer has the run's nodes as
// droplets and exactly the forwarding rules want lists, in the Service's
// port order, as "<entry protocol>:<port>-><target protocol>" with
// " cert <ID>" for a certificate; each rule must target its port's
// NodePort.
func doRules(ctx context.Context, lb func(context.Context, exampleState) (*godo.LoadBalancer, error), run *examplesRun, ex exampleState, want ...string) error {
	if !slices.Equal(ex.LB.Members, run.NodeIDs()) {
		return fmt.Errorf("members %v, want the nodes %v", ex.LB.Members, run.NodeIDs())
	}
	got, err := lb(ctx, ex)
	if err != nil {
		return err
	}
	nodePorts := map[int]int{}
	for _, p := range ex.Service.Spec.Ports {
		nodePorts[int(p.Port)] = int(p.NodePort)
	}
	var rules []string
	for _, r := range got.ForwardingRules {
		if r.TargetPort != nodePorts[r.EntryPort] {
			return fmt.Errorf("rule %+v targets %d, not the NodePort %d", r, r.TargetPort, nodePorts[r.EntryPort])
		}
		s := fmt.Sprintf("%s:%d->%s", r.EntryProtocol, r.EntryPort, r.TargetProtocol)
		if r.CertificateID != "" {
			s += " cert " + r.CertificateID
		}
		rules = append(rules, s)
	}
	if !slices.Equal(rules, want) {
		return fmt.Errorf("forwarding rules %q, want %q", rules, want)
	}
	return nil
}
