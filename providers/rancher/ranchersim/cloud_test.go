package ranchersim

import (
	"net/http"
	"slices"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestCloud(t *testing.T) {
	cloud := StartCloud(simkit.Common{})
	t.Cleanup(cloud.Close)
	env := cloud.Env()
	if env["CATTLE_URL"] != cloud.URL()+"/v2-beta/projects/1a5" || env["CATTLE_ACCESS_KEY"] == "" || env["CATTLE_SECRET_KEY"] == "" {
		t.Fatalf("Env = %v", env)
	}
	c := connect(t, cloud.Server)

	a, b := cloud.AddInstance("node-a"), cloud.AddInstance("node-b")
	cloud.ShutdownInstance(b)
	hosts, err := c.Host.List(filters("uuid", b))
	if err != nil || len(hosts.Data) != 1 || hosts.Data[0].State != StateInactive || hosts.Data[0].Hostname != "node-b" {
		t.Errorf("shut down = %+v, %v", hosts, err)
	}
	ha, _ := cloud.HostByHostname("node-a")
	if len(ha.IPAddresses) != 2 || ha.IPAddresses[0].Address != ha.AgentIPAddress || ha.UUID != a {
		t.Errorf("instance a = %+v", ha)
	}

	k := cloud.AddStack(Stack{Name: "kubernetes-loadbalancers"})
	ext := cloud.AddService(Service{Kind: KindExternal, Name: "nodes", StackID: k.ID, ExternalIPAddresses: []string{ha.AgentIPAddress}})
	lb := cloud.AddService(Service{Name: "lb-web", StackID: k.ID, Links: []ServiceLink{{ServiceID: ext.ID}},
		LaunchConfig: &LaunchConfig{Ports: []string{"80:80/tcp", "53:53/udp"}},
		LBConfig: &LBConfig{PortRules: []PortRule{
			{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceID: ext.ID},
			{SourcePort: 53, TargetPort: 30053, Protocol: "udp", ServiceID: ext.ID},
		}}})
	want := simkit.LoadBalancer{ID: lb.ID, Name: "lb-web", Listeners: []string{"TCP:80->:30080", "UDP:53->:30053"}, Members: []string{a}}
	if lbs := cloud.LoadBalancers(); len(lbs) != 1 || !slices.Equal(lbs[0].Listeners, want.Listeners) ||
		!slices.Equal(lbs[0].Members, want.Members) || lbs[0].ID != want.ID {
		t.Errorf("LoadBalancers = %+v, want %+v", lbs, want)
	}

	cloud.DeleteInstance(a)
	if h, err := c.Host.ById(ha.ID); err != nil || h == nil || h.State != StateRemoved {
		t.Errorf("deleted = %+v, %v", h, err)
	}
	cloud.Advance()
	if h, err := c.Host.ById(ha.ID); err != nil || h != nil {
		t.Errorf("purged = %+v, %v", h, err)
	}

	before := cloud.Writes()
	if _, err := c.Stack.Create(&rancher.Stack{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if cloud.Writes() != before+1 {
		t.Errorf("Writes = %d, want %d", cloud.Writes(), before+1)
	}
	remove := cloud.Inject(Fault{Op: Operations["hosts.list"], Status: http.StatusServiceUnavailable, Count: 1})
	defer remove()
	_, err = c.Host.List(nil)
	wantAPIError(t, err, http.StatusServiceUnavailable, "code=Service Unavailable")
	if _, err := c.Host.List(nil); err != nil {
		t.Errorf("after the one fault: %v", err)
	}
	if cloud.Routes() != nil || cloud.CloudConfig() != "" {
		t.Error("Routes or CloudConfig set")
	}
}

// TestRotateSecret: after a rotation the environment key works with the
// new secret alone.
func TestRotateSecret(t *testing.T) {
	s := NewServer(t, Options{})
	var _ frameworktest.SecretRotator = s.Cloud()
	s.Cloud().RotateSecret("rotated")
	if _, err := rancher.NewRancherClient(&rancher.ClientOpts{Url: s.ProjectURL(s.URL()), AccessKey: DefaultAccessKey, SecretKey: DefaultSecretKey}); err == nil {
		t.Error("the old secret still works")
	}
	connectAs(t, s.ProjectURL(s.URL()), DefaultAccessKey, "rotated")
}
