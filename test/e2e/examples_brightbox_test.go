package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/clientcredentials"
	"github.com/brightbox/gobrightbox/v2/endpoint"
	"github.com/brightbox/gobrightbox/v2/enums/balancingpolicy"
	"github.com/brightbox/gobrightbox/v2/enums/healthchecktype"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/loadbalancerstatus"
	"github.com/brightbox/gobrightbox/v2/enums/proxyprotocol"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// The load balancer examples/services/brightbox/adopt-existing.yaml names,
// and the cloud IP mapped to it: made before the CCM starts, as by hand,
// with a listener, a node and a name that are not the Service's.
const (
	brightboxAdoptedLB  = "lba-exmpl"
	brightboxAdoptedCIP = "cip-exmpl"
)

// brightboxSeed is the cloud the adopt-existing example finds: its load
// balancer, serving a server that is no Node, and its cloud IP.
const brightboxSeed = `
servers:
- {name: legacy-web-1, id: srv-lgcy1}
loadBalancers:
- name: legacy-web
  id: ` + brightboxAdoptedLB + `
  policy: round-robin
  listeners: [{protocol: tcp, in: 8080, out: 8080}]
  healthcheck: {type: tcp, port: 8080}
  nodes: [legacy-web-1]
cloudIPs:
- {name: legacy-web, id: ` + brightboxAdoptedCIP + `, loadBalancer: legacy-web}
`

func init() { registerExamples("brightbox", brightboxExamples) }

// brightboxExamples checks examples/services/brightbox through gobrightbox
// pointed at gbsim. Every example's load balancer must be active, serve
// exactly the Nodes, have one listener per Service port to its NodePort,
// and have one cloud IP mapped whose IPv4 is in the Service's ingress;
// the server group the load balancers share must hold exactly the Nodes,
// and its firewall policy open the NodePorts to the load balancers.
func brightboxExamples() examplesCloud {
	var api *brightbox.Client
	check := func(specific func(*brightbox.LoadBalancer, exampleState) error) exampleCheck {
		return func(ctx context.Context, run *examplesRun, ex exampleState) error {
			lb, err := api.LoadBalancer(ctx, ex.LB.ID)
			if err != nil {
				return err
			}
			if err := brightboxCommon(ctx, api, run, lb, ex.Service); err != nil {
				return err
			}
			return specific(lb, ex)
		}
	}
	return examplesCloud{
		StartCloud: func(o simkit.Common) simkit.Cloud { return gbsim.StartCloud(o) },
		Seed: func(t *testing.T, run *examplesRun) {
			sc, err := gbsim.LoadScenario([]byte(brightboxSeed))
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.Apply(run.Cloud.(*gbsim.Cloud).Server); err != nil {
				t.Fatal(err)
			}
			api = brightboxAPI(t, run)
		},
		Checks: map[string]exampleCheck{
			"tcp.yaml": check(func(lb *brightbox.LoadBalancer, ex exampleState) error {
				return errors.Join(
					brightboxListeners(lb, ex.Service, listenerprotocol.Tcp, 0),
					wantEqual("policy", lb.Policy, balancingpolicy.RoundRobin),
					wantEqual("health check", brightboxCheckTarget(lb.Healthcheck), brightbox.LoadBalancerHealthcheck{
						Type: healthchecktype.Tcp, Port: uint16(ex.Service.Spec.Ports[0].NodePort), Request: "/",
					}))
			}),
			"http.yaml": check(func(lb *brightbox.LoadBalancer, ex exampleState) error {
				return errors.Join(
					brightboxListeners(lb, ex.Service, listenerprotocol.Http, 0),
					wantEqual("listener timeout", lb.Listeners[0].Timeout, uint(60000)),
					wantEqual("health check", brightboxCheckTarget(lb.Healthcheck), brightbox.LoadBalancerHealthcheck{
						Type: healthchecktype.Http, Port: uint16(ex.Service.Spec.Ports[0].NodePort), Request: "/ready",
					}))
			}),
			"https.yaml":          check(brightboxHTTPS),
			"proxy-protocol.yaml": check(brightboxProxyProtocol),
			"etp-local.yaml": check(func(lb *brightbox.LoadBalancer, ex exampleState) error {
				hc := lb.Healthcheck
				return errors.Join(
					brightboxListeners(lb, ex.Service, listenerprotocol.Http, 0),
					wantEqual("health check", brightbox.LoadBalancerHealthcheck{Type: hc.Type, Port: hc.Port, Request: hc.Request, ThresholdUp: hc.ThresholdUp, ThresholdDown: hc.ThresholdDown},
						brightbox.LoadBalancerHealthcheck{
							Type: healthchecktype.Http, Port: uint16(ex.Service.Spec.HealthCheckNodePort), Request: "/healthz", ThresholdUp: 2, ThresholdDown: 3,
						}))
			}),
			"adopt-existing.yaml": check(func(lb *brightbox.LoadBalancer, ex exampleState) error {
				var cips []string
				for _, c := range lb.CloudIPs {
					cips = append(cips, c.ID)
				}
				return errors.Join(
					wantEqual("load balancer", lb.ID, brightboxAdoptedLB),
					wantEqual("name", lb.Name, brightboxName(ex.Service)),
					wantEqual("cloud IPs", cips, []string{brightboxAdoptedCIP}),
					brightboxListeners(lb, ex.Service, listenerprotocol.Http, 0))
			}),
		},
	}
}

// brightboxHTTPS: an http listener on 80 that redirects, an https one on
// 443, and a Let's Encrypt certificate issued for the cloud IP's names
// (its FQDN and reverse DNS name) and ssl-domains, each domain valid.
func brightboxHTTPS(lb *brightbox.LoadBalancer, ex exampleState) error {
	var errs []error
	for _, l := range lb.Listeners {
		want := listenerprotocol.Http
		if l.In == 443 {
			want = listenerprotocol.Https
		}
		if l.Protocol != want {
			errs = append(errs, fmt.Errorf("listener on %d is %s, want %s", l.In, l.Protocol, want))
		}
	}
	errs = append(errs, brightboxListeners(lb, ex.Service, 0, 0), wantEqual("https redirect", lb.HTTPSRedirect, true))
	if lb.Acme == nil || lb.Acme.Certificate == nil {
		return errors.Join(append(errs, errors.New("no Let's Encrypt certificate issued"))...)
	}
	var domains []string
	for _, d := range lb.Acme.Domains {
		if d.Status != "valid" {
			errs = append(errs, fmt.Errorf("domain %s is %s", d.Identifier, d.Status))
		}
		domains = append(domains, d.Identifier)
	}
	want := []string{"www.example.com"}
	for _, c := range lb.CloudIPs {
		want = append(want, c.Fqdn, c.ReverseDNS)
	}
	slices.Sort(domains)
	slices.Sort(want)
	return errors.Join(append(errs, wantEqual("certificate domains", domains, want))...)
}

// brightboxProxyProtocol: tcp listeners sending PROXY v2, and every
// ingress entry of ipMode Proxy.
func brightboxProxyProtocol(lb *brightbox.LoadBalancer, ex exampleState) error {
	return errors.Join(brightboxListeners(lb, ex.Service, listenerprotocol.Tcp, proxyprotocol.V2), ingressProxyMode(ex.Service))
}

// ingressProxyMode checks that every ingress entry of svc has ipMode
// Proxy, as a load balancer sending the PROXY protocol asks.
func ingressProxyMode(svc *corev1.Service) error {
	var errs []error
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IPMode == nil || *in.IPMode != corev1.LoadBalancerIPModeProxy {
			errs = append(errs, fmt.Errorf("ingress %s%s has ipMode %v, want Proxy", in.IP, in.Hostname, in.IPMode))
		}
	}
	return errors.Join(errs...)
}

// brightboxCommon checks what every Brightbox example promises: see
// brightboxExamples.
func brightboxCommon(ctx context.Context, api *brightbox.Client, run *examplesRun, lb *brightbox.LoadBalancer, svc *corev1.Service) error {
	if lb.Status != loadbalancerstatus.Active {
		return fmt.Errorf("load balancer %s is %s", lb.ID, lb.Status)
	}
	var errs []error
	errs = append(errs, wantEqual("nodes", brightboxServerIDs(lb.Nodes), run.NodeIDs()))
	if len(lb.CloudIPs) != 1 {
		errs = append(errs, fmt.Errorf("load balancer %s has cloud IPs %+v, want one", lb.ID, lb.CloudIPs))
	} else if ip := lb.CloudIPs[0].PublicIPv4; !slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, func(in corev1.LoadBalancerIngress) bool { return in.IP == ip }) {
		errs = append(errs, fmt.Errorf("ingress %+v lacks the cloud IP's %s", svc.Status.LoadBalancer.Ingress, ip))
	}
	// The load balancers share one server group holding the nodes, and
	// one firewall policy on it with a rule per load balancer.
	const shared = "ccmkit-lb-nodes.ccmkit"
	groups, err := api.ServerGroups(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(groups, func(g brightbox.ServerGroup) bool { return g.Name == shared })
	if i < 0 {
		return errors.Join(append(errs, fmt.Errorf("no server group %s", shared))...)
	}
	errs = append(errs, wantEqual("server group "+shared, brightboxServerIDs(groups[i].Servers), run.NodeIDs()))
	policies, err := api.FirewallPolicies(ctx)
	if err != nil {
		return err
	}
	j := slices.IndexFunc(policies, func(p brightbox.FirewallPolicy) bool {
		return p.Name == shared && p.ServerGroup != nil && p.ServerGroup.ID == groups[i].ID
	})
	if j < 0 {
		return errors.Join(append(errs, fmt.Errorf("no firewall policy %s on server group %s", shared, groups[i].ID))...)
	}
	return errors.Join(append(errs, brightboxRuleOpens(policies[j], svc))...)
}

// brightboxRuleOpens checks that policy has a rule, described with the
// Service's load balancer's name, opening the Service's NodePorts (and
// its healthCheckNodePort) over tcp to the private network the load
// balancers connect from.
func brightboxRuleOpens(policy brightbox.FirewallPolicy, svc *corev1.Service) error {
	var want []string
	for _, p := range svc.Spec.Ports {
		want = append(want, strconv.Itoa(int(p.NodePort)))
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		want = append(want, strconv.Itoa(int(svc.Spec.HealthCheckNodePort)))
	}
	slices.Sort(want)
	for _, r := range policy.Rules {
		got := strings.Split(r.DestinationPort, ",")
		slices.Sort(got)
		if r.Description == brightboxName(svc) && r.Protocol == "tcp" && r.Source == "10.0.0.0/8" && slices.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("firewall policy %s has no rule opening tcp %v from 10.0.0.0/8: %+v", policy.ID, want, policy.Rules)
}

// brightboxListeners checks that lb has one listener per Service port, from
// the port to its NodePort, of protocol proto (any when 0) and with proxy
// protocol proxy.
func brightboxListeners(lb *brightbox.LoadBalancer, svc *corev1.Service, proto listenerprotocol.Enum, proxy proxyprotocol.Enum) error {
	if len(lb.Listeners) != len(svc.Spec.Ports) {
		return fmt.Errorf("load balancer %s has listeners %+v, want one per Service port", lb.ID, lb.Listeners)
	}
	for _, p := range svc.Spec.Ports {
		if !slices.ContainsFunc(lb.Listeners, func(l brightbox.LoadBalancerListener) bool {
			return int32(l.In) == p.Port && int32(l.Out) == p.NodePort && (proto == 0 || l.Protocol == proto) && l.ProxyProtocol == proxy
		}) {
			return fmt.Errorf("load balancer %s has no %v listener %d -> %d (proxy protocol %v): %+v", lb.ID, proto, p.Port, p.NodePort, proxy, lb.Listeners)
		}
	}
	return nil
}

// brightboxCheckTarget is what a health check checks (its type, port and
// request), without its timings, which the API defaults.
func brightboxCheckTarget(hc brightbox.LoadBalancerHealthcheck) brightbox.LoadBalancerHealthcheck {
	return brightbox.LoadBalancerHealthcheck{Type: hc.Type, Port: hc.Port, Request: hc.Request}
}

// brightboxName is the name the CCM gives a Service's load balancer, cloud
// IP, server group and firewall policy: <service>.<namespace>.<cluster>.
func brightboxName(svc *corev1.Service) string {
	return svc.Name + "." + svc.Namespace + ".ccmkit"
}

func brightboxServerIDs(servers []brightbox.Server) []string {
	ids := make([]string, 0, len(servers))
	for _, s := range servers {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return ids
}

// wantEqual is nil when got is want, else an error saying how what
// differs. The examples' checks of every cloud use it.
func wantEqual[T any](what string, got, want T) error {
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		return fmt.Errorf("%s differs (-want +got):\n%s", what, d)
	}
	return nil
}

// brightboxAPI is a gobrightbox client of the simulated API, with the
// credentials the CCM was given.
func brightboxAPI(t *testing.T, run *examplesRun) *brightbox.Client {
	t.Helper()
	env := run.Cloud.Env()
	api, err := brightbox.Connect(t.Context(), &clientcredentials.Config{
		ID: env["BRIGHTBOX_CLIENT"], Secret: env["BRIGHTBOX_CLIENT_SECRET"],
		Config: endpoint.Config{BaseURL: env["BRIGHTBOX_API_URL"], Account: env["BRIGHTBOX_ACCOUNT"]},
	})
	if err != nil {
		t.Fatal(err)
	}
	return api
}
