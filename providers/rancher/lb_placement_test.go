package rancher_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// activeHostIPs are the agent IPs of the simulated environment's active
// hosts, sorted.
func activeHostIPs(sim *ranchersim.Server) []string {
	var ips []string
	for _, h := range sim.Hosts() {
		if h.State == ranchersim.StateActive {
			ips = append(ips, h.AgentIPAddress)
		}
	}
	slices.Sort(ips)
	return ips
}

func isGlobal(lc *ranchersim.LaunchConfig) bool {
	return lc != nil && lc.Labels[ranchersim.LabelGlobal] == "true"
}

// TestLoadBalancerGlobal: with RANCHER_LB_GLOBAL the HAProxy containers run
// on every active host, so the status holds every host's IP, a host
// joining Cattle is in the status of the next sync that reads the load
// balancer, and that sync writes nothing.
func TestLoadBalancerGlobal(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{Env: map[string]string{"RANCHER_LB_GLOBAL": "true"}})
	f.sim.AddHost(ranchersim.Host{Hostname: "lb-only"}) // a host without a Node runs HAProxy too
	svc := f.Service(t, "web", nil)
	status := f.EnsureReady(t, svc)
	lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	if !isGlobal(lb.LaunchConfig) {
		t.Errorf("launchConfig labels %v, want %s=true", lb.LaunchConfig.Labels, ranchersim.LabelGlobal)
	}
	want := activeHostIPs(f.sim)
	if len(want) != 3 || !slices.Equal(statusIPs(status), want) || !slices.Equal(endpointIPs(f.sim.Endpoints(lb.ID)), want) {
		t.Errorf("status IPs %v, public endpoints %v: want every active host's %v", statusIPs(status), endpointIPs(f.sim.Endpoints(lb.ID)), want)
	}

	// The next sync that reads Cattle (here a new CCM process: this one's
	// list of load balancers is still fresh) reports the joined host.
	joined := f.sim.AddHost(ranchersim.Host{Hostname: "joined"})
	if !slices.Contains(endpointIPs(f.sim.Endpoints(lb.ID)), joined.AgentIPAddress) {
		t.Errorf("public endpoints %v, want the joined host's %s", endpointIPs(f.sim.Endpoints(lb.ID)), joined.AgentIPAddress)
	}
	before := f.sim.Writes()
	f.LB = f.Start(t)
	status = f.EnsureReady(t, svc)
	if !slices.Contains(statusIPs(status), joined.AgentIPAddress) || len(status.Ingress) != 4 {
		t.Errorf("after a host joined the status is %v, want it with %s", statusIPs(status), joined.AgentIPAddress)
	}
	if w := f.sim.Writes() - before; w != 0 {
		t.Errorf("a host joining made %d writes, want none: Cattle places the containers", w)
	}
}

// TestLoadBalancerScale: the scale annotation is one PUT of the load
// balancer (same ID) and its status then holds two hosts' IPs; an idle
// sync writes nothing; removing the annotation leaves the scale.
func TestLoadBalancerScale(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	f.sim.AddHost(ranchersim.Host{Hostname: "spare"})
	svc := f.Service(t, "web", nil)
	status := f.EnsureReady(t, svc)
	lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	if len(status.Ingress) != 1 || isGlobal(lb.LaunchConfig) {
		t.Fatalf("default status %v, global %v: want one host, as the existing CCM made it", statusIPs(status), isGlobal(lb.LaunchConfig))
	}

	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations = map[string]string{rancher.AnnotationPrefix + "scale": "2"} })
	before := f.sim.Writes()
	status = f.EnsureReady(t, svc)
	after := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	if after.ID != lb.ID || after.Scale != 2 || after.Upgrade != nil {
		t.Errorf("load balancer %s scale %d (upgrade %+v), want %s scaled to 2 by update", after.ID, after.Scale, after.Upgrade, lb.ID)
	}
	if w := f.sim.Writes() - before; w != 1 {
		t.Errorf("scaling made %d writes, want one PUT", w)
	}
	if ips := statusIPs(status); len(ips) != 2 || !slices.Equal(ips, endpointIPs(f.sim.Endpoints(lb.ID))) {
		t.Errorf("status IPs %v, want the two hosts of the public endpoints %v", ips, endpointIPs(f.sim.Endpoints(lb.ID)))
	}
	before = f.sim.Writes()
	if _, syncs := f.EnsureReadySyncs(t, svc); syncs != 1 || f.sim.Writes() != before {
		t.Errorf("an idle sync retried %d times and made %d writes, want none", syncs-1, f.sim.Writes()-before)
	}

	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations = nil })
	f.EnsureReady(t, svc)
	if got, _ := f.sim.Service(lb.ID); got.Scale != 2 || f.sim.Writes() != before {
		t.Errorf("without the annotation: scale %d and %d writes, want 2 left alone", got.Scale, f.sim.Writes()-before)
	}
}

// TestLoadBalancerGlobalSwitch: switching an existing load balancer to
// global is Cattle's in-service upgrade: same ID, every active host; and
// back again.
func TestLoadBalancerGlobalSwitch(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	f.sim.AddHost(ranchersim.Host{Hostname: "spare"})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer)

	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Annotations = map[string]string{rancher.AnnotationPrefix + "global": "true"}
	})
	status := f.EnsureReady(t, svc)
	after := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	if after.ID != lb.ID || !isGlobal(after.LaunchConfig) || after.Upgrade == nil || after.State != ranchersim.StateActive {
		t.Fatalf("load balancer %s %s (global %v, upgrade %+v), want %s upgraded in place to global", after.ID, after.State, isGlobal(after.LaunchConfig), after.Upgrade, lb.ID)
	}
	if got, want := statusIPs(status), activeHostIPs(f.sim); !slices.Equal(got, want) {
		t.Errorf("status IPs %v, want every active host's %v", got, want)
	}
	if !slices.Equal(after.LaunchConfig.Ports, lb.LaunchConfig.Ports) || after.LaunchConfig.ImageUUID != lb.LaunchConfig.ImageUUID {
		t.Errorf("launchConfig %+v, want the ports and image of %+v kept", after.LaunchConfig, lb.LaunchConfig)
	}

	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations = nil })
	status = f.EnsureReady(t, svc)
	if back := onlyService(t, f.sim, ranchersim.KindLoadBalancer); back.ID != lb.ID || isGlobal(back.LaunchConfig) || len(status.Ingress) != 1 {
		t.Errorf("switched back: %s global %v, status %v; want %s on one host", back.ID, isGlobal(back.LaunchConfig), statusIPs(status), lb.ID)
	}
}

// TestLoadBalancerPlacementRejects: a bad scale, or a scale on a global
// load balancer, is a Warning Event naming the annotations, and nothing
// is written.
func TestLoadBalancerPlacementRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		env         map[string]string
		annotations map[string]string
		want        []string
	}{
		"zero scale":         {annotations: map[string]string{"scale": "0"}, want: []string{"-scale"}},
		"scale not a number": {annotations: map[string]string{"scale": "two"}, want: []string{"-scale"}},
		"global not a bool":  {annotations: map[string]string{"global": "everywhere"}, want: []string{"-global"}},
		"scale and global":   {annotations: map[string]string{"scale": "2", "global": "true"}, want: []string{"-scale", "-global"}},
		"scale on a global cluster": {
			env: map[string]string{"RANCHER_LB_GLOBAL": "true"}, annotations: map[string]string{"scale": "2"},
			want: []string{"-scale", "RANCHER_LB_GLOBAL"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newLBFixture(t, frameworktest.LBOptions{Env: tc.env})
			annotations := map[string]string{}
			for k, v := range tc.annotations {
				annotations[rancher.AnnotationPrefix+k] = v
			}
			svc := f.Service(t, "web", annotations)
			if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil {
				t.Fatal("EnsureLoadBalancer: no error")
			}
			if w := f.sim.Writes(); w != 0 {
				t.Errorf("%d writes, want none", w)
			}
			events := f.Drain()
			if !slices.ContainsFunc(events, func(e string) bool {
				return strings.HasPrefix(e, "Warning") && !slices.ContainsFunc(tc.want, func(w string) bool { return !strings.Contains(e, w) })
			}) {
				t.Errorf("events %q: want a Warning naming %q", events, tc.want)
			}
		})
	}
}
