package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// rancherAdopted is the load balancer
// examples/services/rancher/adopt-existing.yaml names: made before the CCM
// starts, as in the Rancher UI, in a stack of its own, with a port that is
// not the Service's.
const rancherAdopted = "1s901"

// rancherCertificate is the Cattle certificate
// examples/services/rancher/https.yaml names, uploaded before the CCM
// starts.
const rancherCertificate = "1c901"

// rancherSeed is the cloud the adopt-existing example finds.
const rancherSeed = `
stacks:
- {name: legacy, id: 1st901}
services:
- name: legacy-web
  id: ` + rancherAdopted + `
  stack: legacy
  launchConfig: {imageUuid: "docker:rancher/lb-service-haproxy:v0.9.14", ports: ["8080:8080/tcp"]}
`

func init() { registerExamples("rancher", rancherExamples) }

// rancherExamples checks examples/services/rancher through go-rancher
// pointed at ranchersim. Every example's loadBalancerService must be
// active, publish each Service port on its hosts (<port>:<port>/<tcp|udp>),
// and have one port rule per Service port, of the example's protocol, to
// its NodePort on one active externalService that holds exactly the
// Nodes' agent IPs; the Service's ingress must be the load balancer's
// public endpoint IPs.
func rancherExamples() examplesCloud {
	var api *rancher.RancherClient
	check := func(proto string, specific func(lb *rancher.LoadBalancerService, backend *rancher.ExternalService, ex exampleState) error) exampleCheck {
		return func(ctx context.Context, run *examplesRun, ex exampleState) error {
			lb, err := api.LoadBalancerService.ById(ex.LB.ID)
			if err != nil {
				return err
			}
			if lb == nil || lb.State != "active" {
				return fmt.Errorf("load balancer %s is not active: %+v", ex.LB.ID, lb)
			}
			backend, err := rancherBackend(api, lb, ex.Service, proto)
			if err != nil {
				return err
			}
			ips, err := rancherAgentIPs(api, run.Nodes)
			if err != nil {
				return err
			}
			var ingress []string
			for _, in := range ex.Service.Status.LoadBalancer.Ingress {
				ingress = append(ingress, in.IP)
			}
			errs := []error{
				wantEqual("external service "+backend.Id+" addresses", slices.Sorted(slices.Values(backend.ExternalIpAddresses)), ips),
				wantEqual("ingress IPs", slices.Sorted(slices.Values(ingress)), endpointIPs(lb)),
			}
			if backend.State != "active" {
				errs = append(errs, fmt.Errorf("external service %s is %s", backend.Id, backend.State))
			}
			if specific != nil {
				errs = append(errs, specific(lb, backend, ex))
			}
			return errors.Join(errs...)
		}
	}
	return examplesCloud{
		StartCloud: func(o simkit.Common) simkit.Cloud { return ranchersim.StartCloud(o) },
		Seed: func(t *testing.T, run *examplesRun) {
			sc, err := ranchersim.LoadScenario([]byte(rancherSeed))
			if err != nil {
				t.Fatal(err)
			}
			sim := run.Cloud.(*ranchersim.Cloud).Server
			if err := sc.Apply(sim); err != nil {
				t.Fatal(err)
			}
			cert, key := rancherSelfSigned(t, "www.example.com")
			sim.AddCertificate(ranchersim.Certificate{ID: rancherCertificate, Name: "www-example-com", Cert: cert, Key: key})
			api = cattleClient(t, run.Cluster)
		},
		Checks: map[string]exampleCheck{
			"tcp.yaml": check("tcp", nil),
			"udp.yaml": check("udp", nil),
			"http.yaml": check("http", func(lb *rancher.LoadBalancerService, _ *rancher.ExternalService, _ exampleState) error {
				var got rancher.LoadBalancerCookieStickinessPolicy
				if lb.LbConfig.StickinessPolicy != nil {
					got = *lb.LbConfig.StickinessPolicy
				}
				return wantEqual("stickiness cookie and mode", got.Cookie+" "+got.Mode, "EXAMPLE-NODE insert")
			}),
			"https.yaml": check("https", func(lb *rancher.LoadBalancerService, _ *rancher.ExternalService, _ exampleState) error {
				cert, err := api.Certificate.ById(lb.LbConfig.DefaultCertificateId)
				if err != nil {
					return err
				}
				if cert == nil || cert.State != "active" {
					return fmt.Errorf("default certificate %q is no active certificate: %+v", lb.LbConfig.DefaultCertificateId, cert)
				}
				return errors.Join(
					wantEqual("default certificate", cert.Id+" "+cert.CN, rancherCertificate+" www.example.com"),
					wantEqual("SNI certificates", len(lb.LbConfig.CertificateIds), 0),
				)
			}),
			"etp-local.yaml": check("tcp", func(_ *rancher.LoadBalancerService, backend *rancher.ExternalService, ex exampleState) error {
				if backend.HealthCheck == nil {
					return fmt.Errorf("external service %s has no health check", backend.Id)
				}
				hc := *backend.HealthCheck
				hc.Resource = rancher.Resource{}
				return wantEqual("health check", hc, rancher.InstanceHealthCheck{
					Port: int64(ex.Service.Spec.HealthCheckNodePort), RequestLine: `GET "/healthz" "HTTP/1.0"`, Strategy: "none",
					Interval: 5000, ResponseTimeout: 2000, HealthyThreshold: 2, UnhealthyThreshold: 2,
				})
			}),
			"adopt-existing.yaml": check("tcp", func(lb *rancher.LoadBalancerService, _ *rancher.ExternalService, _ exampleState) error {
				return wantEqual("load balancer", lb.Id, rancherAdopted)
			}),
		},
	}
}

// rancherBackend checks lb's ports and port rules against svc's (see
// rancherExamples) and returns the external service they forward to.
func rancherBackend(api *rancher.RancherClient, lb *rancher.LoadBalancerService, svc *corev1.Service, proto string) (*rancher.ExternalService, error) {
	if lb.LaunchConfig == nil || lb.LbConfig == nil || len(lb.LbConfig.PortRules) != len(svc.Spec.Ports) {
		return nil, fmt.Errorf("load balancer %s: launch config %+v, lbConfig %+v, want one port rule per Service port", lb.Id, lb.LaunchConfig, lb.LbConfig)
	}
	var want []string
	backend := lb.LbConfig.PortRules[0].ServiceId
	for _, p := range svc.Spec.Ports {
		want = append(want, fmt.Sprintf("%d:%d/%s", p.Port, p.Port, strings.ToLower(string(p.Protocol))))
		if !slices.ContainsFunc(lb.LbConfig.PortRules, func(r rancher.PortRule) bool {
			return r.SourcePort == int64(p.Port) && r.TargetPort == int64(p.NodePort) && r.Protocol == proto && r.ServiceId == backend
		}) {
			return nil, fmt.Errorf("load balancer %s has no %s rule %d -> %d on %s: %+v", lb.Id, proto, p.Port, p.NodePort, backend, lb.LbConfig.PortRules)
		}
	}
	if err := wantEqual("load balancer "+lb.Id+" ports", slices.Sorted(slices.Values(lb.LaunchConfig.Ports)), slices.Sorted(slices.Values(want))); err != nil {
		return nil, err
	}
	ext, err := api.ExternalService.ById(backend)
	if err != nil {
		return nil, err
	}
	if ext == nil {
		return nil, fmt.Errorf("the port rules' external service %s does not exist", backend)
	}
	return ext, nil
}

// rancherAgentIPs are the agent IPs of the hosts of nodes (by name, their
// host UUIDs), sorted, as the cloud lists them.
func rancherAgentIPs(api *rancher.RancherClient, nodes map[string]string) ([]string, error) {
	hosts, err := api.Host.List(&rancher.ListOpts{Filters: map[string]any{"removed_null": "1"}})
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, h := range hosts.Data {
		if slices.Contains(sortedValues(nodes), h.Uuid) {
			ips = append(ips, h.AgentIpAddress)
		}
	}
	if len(ips) != len(nodes) {
		return nil, fmt.Errorf("the cloud lists %d of the %d nodes' hosts", len(ips), len(nodes))
	}
	slices.Sort(ips)
	return ips, nil
}

// rancherSelfSigned is a self-signed PEM certificate for cn and its key,
// as a user would upload to Cattle.
func rancherSelfSigned(t *testing.T, cn string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}
