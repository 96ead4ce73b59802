package gbsim

import (
	"errors"
	"net/http"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

// parseError fails unless err is a *brightbox.APIError of a 2xx answer
// gobrightbox could not decode.
func parseError(t *testing.T, err error) {
	t.Helper()
	var ae *brightbox.APIError
	if !errors.As(err, &ae) || ae.ParseError == nil || ae.StatusCode != http.StatusOK {
		t.Fatalf("err = %v, want a parse error of a 200 answer", err)
	}
}

func TestMalformedAnswers(t *testing.T) {
	s, c := setup(t, Options{})
	srv := s.AddServer(CloudServer{Name: "a"})

	remove := s.Inject(Fault{Op: "GET /1.0/servers/{id}", Truncate: true, Count: 1})
	_, err := c.Server(ctx(), srv.ID)
	parseError(t, err)
	remove()

	s.CorruptStatus("GET /1.0/servers*", 2)
	_, err = c.Server(ctx(), srv.ID)
	parseError(t, err)
	_, err = c.Servers(ctx())
	parseError(t, err)
	if _, err := c.Server(ctx(), srv.ID); err != nil {
		t.Errorf("after the corruptions ran out: %v", err)
	}
}

func TestInjectedErrors(t *testing.T) {
	s, c := setup(t, Options{})
	remove := s.Fail(http.StatusServiceUnavailable, "GET /1.0/load_balancers")
	_, err := c.LoadBalancers(ctx())
	ae := wantAPIError(t, err, http.StatusServiceUnavailable)
	if ae.ErrorName == "" || len(ae.Errors) != 1 {
		t.Errorf("error body = %q %q", ae.ErrorName, ae.Errors)
	}
	remove()
	s.Inject(Fault{Op: "POST /1.0/cloud_ips", Status: http.StatusForbidden, Code: "Forbidden", Message: "Account limit reached"})
	_, err = c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{})
	if ae := wantAPIError(t, err, http.StatusForbidden); ae.Error() != "Forbidden: Account limit reached" {
		t.Errorf("error = %q", ae.Error())
	}
	if s.Writes() != 0 || len(s.CloudIPs()) != 0 {
		t.Errorf("writes %d, cloud IPs %d after a refused create", s.Writes(), len(s.CloudIPs()))
	}
	if n := s.Stats()["POST /1.0/cloud_ips"]; n != 1 {
		t.Errorf("stats: %d cloud IP creates, want 1", n)
	}
}

func TestAccountLimits(t *testing.T) {
	s, c := setup(t, Options{CloudIPsLimit: 1, LoadBalancersLimit: 1})
	if _, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{})
	if ae := wantAPIError(t, err, http.StatusForbidden); ae.ErrorName != "Forbidden" {
		t.Errorf("error_name = %q", ae.ErrorName)
	}
	if _, err := c.CreateLoadBalancer(ctx(), lbOptions()); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateLoadBalancer(ctx(), lbOptions())
	wantStatus(t, err, http.StatusForbidden)
	accounts, err := c.Accounts(ctx())
	if err != nil || accounts[0].CloudIPsUsed != 1 || accounts[0].CloudIPsLimit != 1 || accounts[0].LoadBalancersUsed != 1 {
		t.Errorf("account = %+v, %v", accounts, err)
	}
	if n := len(s.LoadBalancers()); n != 1 {
		t.Errorf("%d load balancers", n)
	}
}
