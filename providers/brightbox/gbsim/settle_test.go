package gbsim

import (
	"net/http"
	"slices"
	"testing"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/loadbalancerstatus"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// settleAfter is the Options.SettleAfter of these tests: pending
// resources settle with time, and reads alone (unreachably many) never
// would.
const settleAfter = 5 * time.Millisecond

// timeOnly are Options under which only time settles anything.
func timeOnly() Options {
	o := Options{ProvisioningReads: 1 << 20, MappingReads: 1 << 20, DeletedReads: 1 << 20}
	o.SettleAfter = settleAfter
	return o
}

func lbStatus(s *Server, id string) string {
	for _, lb := range s.LoadBalancers() {
		if lb.ID == id {
			return lb.Status
		}
	}
	return ""
}

func cloudIP(s *Server, id string) (CloudIP, bool) {
	i := slices.IndexFunc(s.CloudIPs(), func(c CloudIP) bool { return c.ID == id })
	if i < 0 {
		return CloudIP{}, false
	}
	return s.CloudIPs()[i], true
}

// TestDeletingLoadBalancerSettlesWithTime is the existing Brightbox CCM's
// delete: it destroys the load balancer, then retries destroying its
// cloud IP without reading the load balancer again. The real API moves
// the load balancer on to deleted with time and unmaps its cloud IPs
// (cloud-apis.md §3.3: deleting -> deleted), so the cloud IP can go;
// gbsim moved it on only when read, and the CCM leaked every cloud IP.
func TestDeletingLoadBalancerSettlesWithTime(t *testing.T) {
	s, c := setup(t, timeOnly())
	srv := s.AddServer(CloudServer{Name: "worker-1"})
	lb := s.AddLoadBalancer(LoadBalancer{Name: "web", Nodes: []string{srv.ID},
		Listeners: []Listener{{Protocol: "tcp", In: 80, Out: 31080}}, Healthcheck: Healthcheck{Type: "tcp", Port: 31080}})
	cip := s.AddCloudIP(CloudIP{Target: lb.ID})

	deleted, err := c.DestroyLoadBalancer(ctx(), lb.ID)
	if err != nil || deleted.Status != loadbalancerstatus.Deleting {
		t.Fatalf("destroy = %+v, %v; want deleting", deleted, err)
	}
	_, err = c.DestroyCloudIP(ctx(), cip.ID)
	wantStatus(t, err, http.StatusConflict) // still mapped while deleting
	simkit.WaitFor(t, "cloud IP unmapped", func() bool {
		c, _ := cloudIP(s, cip.ID)
		return c.Target == ""
	})
	if st := lbStatus(s, lb.ID); st != StatusDeleted {
		t.Errorf("load balancer %s, want deleted", st)
	}
	if _, err := c.DestroyCloudIP(ctx(), cip.ID); err != nil {
		t.Fatalf("destroy cloud IP once the LB is deleted: %v", err)
	}
	if _, ok := cloudIP(s, cip.ID); ok {
		t.Error("cloud IP still held after its delete")
	}
}

// TestPendingSettlesWithTime: everything pending settles with time,
// unread (cloud-apis.md §3.3): a new load balancer becomes active, a
// cloud IP mapped onto it shows, its ACME domains validate once it has
// one, a creating server becomes active, and the deleted stop being
// listed.
func TestPendingSettlesWithTime(t *testing.T) {
	s, c := setup(t, timeOnly())
	creating := s.AddServer(CloudServer{Name: "booting", Status: StatusCreating})
	deleted := s.AddServer(CloudServer{Name: "gone", Status: StatusDeleted})
	other := s.OtherAccountServer().AddServer(CloudServer{Name: "other", Status: StatusCreating})

	opts := lbOptions()
	opts.Listeners = append(opts.Listeners, brightbox.LoadBalancerListener{Protocol: listenerprotocol.Https, In: 443, Out: 31080})
	opts.Domains = &[]string{"example.com"}
	lb, err := c.CreateLoadBalancer(ctx(), opts)
	if err != nil {
		t.Fatal(err)
	}
	cip, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID}); err != nil {
		t.Fatal(err)
	}

	server := func(s *Server, id string) CloudServer {
		i := slices.IndexFunc(s.Servers(), func(srv CloudServer) bool { return srv.ID == id })
		if i < 0 {
			return CloudServer{}
		}
		return s.Servers()[i]
	}
	simkit.WaitFor(t, "load balancer active", func() bool { return lbStatus(s, lb.ID) == StatusActive })
	simkit.WaitFor(t, "cloud IP mapped", func() bool { c, _ := cloudIP(s, cip.ID); return c.Target == lb.ID })
	simkit.WaitFor(t, "ACME domain valid", func() bool {
		i := slices.IndexFunc(s.LoadBalancers(), func(l LoadBalancer) bool { return l.ID == lb.ID })
		l := s.LoadBalancers()[i]
		return l.Domains[0].Status == ACMEValid && l.ACMECertificate != nil
	})
	simkit.WaitFor(t, "server active", func() bool { return server(s, creating.ID).Status == StatusActive })
	simkit.WaitFor(t, "other account's server active", func() bool {
		return server(s.OtherAccountServer(), other.ID).Status == StatusActive
	})
	// The deleted server is no longer listed.
	simkit.WaitFor(t, "deleted server gone", func() bool { return server(s, deleted.ID).ID == "" })
	list, err := c.Servers(ctx())
	if err != nil || slices.ContainsFunc(list, func(srv brightbox.Server) bool { return srv.ID == deleted.ID }) {
		t.Errorf("servers = %d, %v; want the deleted one gone", len(list), err)
	}
}
