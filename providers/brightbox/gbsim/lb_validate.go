package gbsim

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// lbRequest is the body of POST and PUT /1.0/load_balancers
// (gobrightbox's LoadBalancerOptions): an absent field keeps its value on
// update.
type lbRequest struct {
	Name                  *string         `json:"name"`
	Nodes                 *[]nodeRef      `json:"nodes"`
	Policy                *string         `json:"policy"`
	Listeners             *[]listenerReq  `json:"listeners"`
	Healthcheck           *healthcheckReq `json:"healthcheck"`
	Domains               *[]string       `json:"domains"`
	CertificatePem        *string         `json:"certificate_pem"`
	CertificatePrivateKey *string         `json:"certificate_private_key"`
	SSLMinimumVersion     *string         `json:"ssl_minimum_version"`
	HTTPSRedirect         *bool           `json:"https_redirect"`
	BufferSize            *int            `json:"buffer_size"`
}

// nodeRef names a node: {"node": "srv-xxxxx"}.
type nodeRef struct {
	Node string `json:"node"`
}

// listenerReq is a listener in a request; an enum given is checked, even
// "".
type listenerReq struct {
	Protocol      *string `json:"protocol"`
	In            int     `json:"in"`
	Out           int     `json:"out"`
	Timeout       int     `json:"timeout"`
	ProxyProtocol *string `json:"proxy_protocol"`
}

type healthcheckReq struct {
	Type          *string `json:"type"`
	Port          int     `json:"port"`
	Request       string  `json:"request"`
	Interval      int     `json:"interval"`
	Timeout       int     `json:"timeout"`
	ThresholdUp   int     `json:"threshold_up"`
	ThresholdDown int     `json:"threshold_down"`
}

// SSLMinimumVersions are the values ssl_minimum_version takes.
var SSLMinimumVersions = []string{"TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"}

// apply sets lb's fields from the request's, checking the enums given.
func (req *lbRequest) apply(lb *LoadBalancer) error {
	var errs []error
	if req.Name != nil {
		lb.Name = *req.Name
	}
	if req.Policy != nil {
		errs = append(errs, enumError("policy", *req.Policy, BalancingPolicies))
		lb.Policy = *req.Policy
	}
	if req.Nodes != nil {
		lb.Nodes = nodeIDs(*req.Nodes)
	}
	if req.Listeners != nil {
		ls, err := listeners(*req.Listeners)
		errs = append(errs, err)
		lb.Listeners = ls
	}
	if h := req.Healthcheck; h != nil {
		if h.Type == nil {
			errs = append(errs, errors.New("healthcheck.type: required"))
		} else {
			errs = append(errs, enumError("healthcheck.type", *h.Type, HealthcheckTypes))
			lb.Healthcheck = Healthcheck{Type: *h.Type, Port: h.Port, Request: h.Request, Interval: h.Interval,
				Timeout: h.Timeout, ThresholdUp: h.ThresholdUp, ThresholdDown: h.ThresholdDown}
		}
	}
	if req.Domains != nil {
		lb.Domains, lb.ACMECertificate = nil, nil
		for _, d := range *req.Domains {
			lb.Domains = append(lb.Domains, ACMEDomain{Identifier: d, Status: ACMEPending})
		}
	}
	errs = append(errs, req.applyCertificate(lb))
	if req.SSLMinimumVersion != nil {
		errs = append(errs, enumError("ssl_minimum_version", *req.SSLMinimumVersion, SSLMinimumVersions))
		lb.SSLMinimumVersion = *req.SSLMinimumVersion
	}
	if req.HTTPSRedirect != nil {
		lb.HTTPSRedirect = *req.HTTPSRedirect
	}
	if req.BufferSize != nil {
		lb.BufferSize = *req.BufferSize
	}
	return errors.Join(errs...)
}

// applyCertificate sets the uploaded certificate: both the PEM and the
// key, or neither; an empty PEM removes it.
func (req *lbRequest) applyCertificate(lb *LoadBalancer) error {
	pem, key := req.CertificatePem, req.CertificatePrivateKey
	switch {
	case pem == nil && key == nil:
		return nil
	case pem == nil || key == nil:
		return errors.New("certificate_pem and certificate_private_key go together")
	case *pem == "":
		lb.Certificate = nil
		return nil
	case !strings.Contains(*pem, "BEGIN CERTIFICATE") || !strings.Contains(*key, "PRIVATE KEY"):
		return errors.New("certificate_pem: not a PEM certificate and private key")
	}
	lb.Certificate = &Certificate{Fingerprint: fingerprint(*pem), IssuedAt: epoch, ExpiresAt: epoch.AddDate(1, 0, 0)}
	return nil
}

func nodeIDs(nodes []nodeRef) []string {
	var ids []string
	for _, n := range nodes {
		if !slices.Contains(ids, n.Node) {
			ids = append(ids, n.Node)
		}
	}
	return ids
}

func listeners(reqs []listenerReq) ([]Listener, error) {
	var errs []error
	out := make([]Listener, 0, len(reqs))
	for i, l := range reqs {
		f := fmt.Sprintf("listeners[%d]", i)
		ln := Listener{In: l.In, Out: l.Out, Timeout: l.Timeout}
		if l.Protocol == nil {
			errs = append(errs, fmt.Errorf("%s.protocol: required", f))
		} else {
			errs = append(errs, enumError(f+".protocol", *l.Protocol, ListenerProtocols))
			ln.Protocol = *l.Protocol
		}
		if l.ProxyProtocol != nil {
			errs = append(errs, enumError(f+".proxy_protocol", *l.ProxyProtocol, ProxyProtocols))
			ln.ProxyProtocol = *l.ProxyProtocol
		}
		out = append(out, ln)
	}
	return out, errors.Join(errs...)
}

var domainName = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)

// validateLB checks a load balancer as the API would store it.
func validateLB(st *state, lb *LoadBalancer) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	errs = append(errs, enumError("policy", lb.Policy, BalancingPolicies))
	if len(lb.Listeners) == 0 {
		bad("listeners: at least one is required")
	}
	ins := map[int]bool{}
	https := false
	for i, l := range lb.Listeners {
		f := fmt.Sprintf("listeners[%d]", i)
		errs = append(errs, enumError(f+".protocol", l.Protocol, ListenerProtocols))
		if l.ProxyProtocol != "" {
			errs = append(errs, enumError(f+".proxy_protocol", l.ProxyProtocol, ProxyProtocols))
		}
		if !validPort(l.In) || !validPort(l.Out) {
			bad("%s: in and out must be ports (1-65535), not %d and %d", f, l.In, l.Out)
		}
		if ins[l.In] {
			bad("%s.in: port %d has another listener", f, l.In)
		}
		ins[l.In] = true
		if l.Timeout < 1000 || l.Timeout > 86_400_000 {
			bad("%s.timeout: %d is not between 1000 and 86400000 milliseconds", f, l.Timeout)
		}
		https = https || l.Protocol == "https"
	}
	if https && lb.Certificate == nil && len(lb.Domains) == 0 {
		bad("listeners: an https listener needs a certificate or domains")
	}
	errs = append(errs, validateHealthcheck(lb.Healthcheck))
	for i, d := range lb.Domains {
		if !domainName.MatchString(d.Identifier) {
			bad("domains[%d]: %q is not a domain name", i, d.Identifier)
		}
	}
	errs = append(errs, enumError("ssl_minimum_version", lb.SSLMinimumVersion, SSLMinimumVersions))
	if lb.BufferSize < 1024 || lb.BufferSize > 16384 {
		bad("buffer_size: %d is not between 1024 and 16384", lb.BufferSize)
	}
	for _, id := range lb.Nodes {
		if srv, ok := st.servers.Get(id); !ok || srv.Status == StatusDeleted {
			bad("nodes: no server %s", id)
		}
	}
	return errors.Join(errs...)
}

func validateHealthcheck(hc Healthcheck) error {
	var errs []error
	errs = append(errs, enumError("healthcheck.type", hc.Type, HealthcheckTypes))
	if !validPort(hc.Port) {
		errs = append(errs, fmt.Errorf("healthcheck.port: %d is not a port", hc.Port))
	}
	if hc.Interval < 1000 || hc.Timeout < 1000 || hc.ThresholdUp < 1 || hc.ThresholdDown < 1 {
		errs = append(errs, errors.New("healthcheck: interval and timeout are at least 1000 ms, thresholds at least 1"))
	}
	if hc.Type == "http" && !strings.HasPrefix(hc.Request, "/") {
		errs = append(errs, fmt.Errorf("healthcheck.request: %q is not a path", hc.Request))
	}
	return errors.Join(errs...)
}

func validPort(p int) bool { return p >= 1 && p <= 65535 }
