package frameworktest

import (
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Harness connects the conformance suite to one provider and its simulated
// cloud. Each call to Setup starts a fresh, empty simulated cloud (stopped
// with t.Cleanup) and returns a new, unconfigured provider that the
// settings in Target point at it.
type Harness interface {
	Setup(t *testing.T) *Target
}

// HarnessFunc is a Harness as a function, which Setup calls.
type HarnessFunc func(t *testing.T) *Target

// Setup implements Harness.
func (h HarnessFunc) Setup(t *testing.T) *Target { return h(t) }

// SimHarness is the Harness of a simulated cloud: each Setup starts a
// fresh one with newServer (a <cloud>sim's NewServer, with its zero
// options) and wires the provider to it with target:
//
//	var harness = frameworktest.SimHarness(dosim.NewServer, target)
func SimHarness[O, S any](newServer func(simkit.TB, O) S, target func(S) *Target) HarnessFunc {
	return func(t *testing.T) *Target {
		var opts O
		return target(newServer(t, opts))
	}
}

// Target is one provider wired to one simulated cloud.
type Target struct {
	// Provider is new and uninitialized; the suite calls framework.NewCloud.
	Provider framework.Provider
	// Env holds the environment variables the provider's config reads
	// (endpoint, credentials, region...).
	Env map[string]string
	// CloudConfig is the --cloud-config file content, "" for none.
	CloudConfig string
	// Cloud controls and inspects the simulated cloud.
	Cloud Cloud

	// InvalidAnnotations are Service annotations the provider must reject
	// (e.g. a health-check interval of "abc"); at least one.
	InvalidAnnotations map[string]string
	// Annotations are added to every Service the suite creates (e.g. a
	// required region or network).
	Annotations map[string]string
	// NoZone / NoRegion: the cloud has no zones or regions to report.
	NoZone, NoRegion bool
	// OptionalFields are members of the cloud's answers that a
	// well-formed answer may leave out or empty: ones users set
	// (Rancher's host labels), that a policy may hide (Nova's
	// OS-EXT-AZ:availability_zone), or that the cloud fills in later
	// (Cattle's publicEndpoints, once a load balancer's containers run).
	// As JSON pointers whose "*" matches one segment (path.Match):
	// FuzzResponses takes an answer with one of them dropped, emptied or
	// renamed for a well-formed one, whose instance metadata or
	// load-balancer status may differ.
	OptionalFields []string
	// MaxProvisioningPolls bounds how often the suite advances the cloud
	// while waiting for an LB; default 20.
	MaxProvisioningPolls int
}

// Cloud is the simulated cloud as the suite sees it.
type Cloud interface {
	// AddInstance creates a running instance called name and returns its
	// cloud ID (the providerID without the scheme).
	AddInstance(name string) (id string)
	// DeleteInstance removes an instance.
	DeleteInstance(id string)
	// ShutdownInstance powers an instance off without deleting it.
	ShutdownInstance(id string)
	// Fail makes every following API request fail with f until restore is
	// called.
	Fail(f Fault) (restore func())
	// Writes counts the mutating requests the cloud has served so far.
	Writes() int
	// LoadBalancers lists the cloud's load balancers, provider-neutrally.
	LoadBalancers() []LoadBalancer
	// Advance moves asynchronous resources one step (e.g. an LB from
	// provisioning to active).
	Advance()
}

// Fault is an injected API failure: an HTTP status with the cloud's error
// body or with a page of someone else's (Body), a body cut short or
// otherwise mangled, or a delay longer than the client's timeout.
type Fault struct {
	// Status answers every request with this status.
	Status int
	// Body and ContentType, when set, are the answer's body and its type
	// as they are, instead of the cloud's error body: a page that a proxy
	// or a router, not the cloud's API, answered with.
	Body, ContentType string
	// Truncate serves each request but sends only the first half of its
	// body (with a Content-Length to match).
	Truncate bool
	// Mutate, when set, serves each request and sends the body it makes
	// of the answer (simkit.Fault.Mutate): FuzzResponses arms
	// simkit.Mutation with it.
	Mutate func(status int, body []byte) []byte
	// Delay holds each request this long first.
	Delay time.Duration
}

// Faults the suite injects: none of them may make InstanceExists say false.
var (
	FaultServerError  = Fault{Status: 500}
	FaultUnauthorized = Fault{Status: 401}
	FaultTimeout      = Fault{Delay: 3 * time.Second}
	// FaultProxyNotFound is a reverse proxy's 404 page: a 404, but not the
	// cloud's answer about any resource.
	FaultProxyNotFound = Fault{Status: 404, ContentType: "text/html",
		Body: "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"}
	// FaultWrongBaseURL is what a server answers for a path none of its
	// routes serve, as when the API URL is configured with a wrong path:
	// Go's ServeMux 404.
	FaultWrongBaseURL = Fault{Status: 404, ContentType: "text/plain; charset=utf-8", Body: "404 page not found\n"}
	// FaultTruncatedBody answers 200 with the first half of the body.
	FaultTruncatedBody = Fault{Truncate: true}
)

// SimFault is f as a simkit.Fault, for simulators built on simkit. A bare
// Status gets the simulator's own error body; Body is sent verbatim.
func (f Fault) SimFault() simkit.Fault {
	sf := simkit.Fault{Status: f.Status, Delay: f.Delay, Truncate: f.Truncate, Mutate: f.Mutate}
	if f.ContentType != "" {
		sf.Body, sf.ContentType = f.Body, f.ContentType
	}
	return sf
}

// LoadBalancer is a cloud LB in a form every provider can produce (the
// simulators' own type).
type LoadBalancer = simkit.LoadBalancer

// FormatListener writes a listener as LoadBalancer.Listeners holds it:
// "<PROTO>:<port>->:<nodePort>", the protocol in upper case, e.g.
// "TCP:80->:30080".
func FormatListener(protocol string, port, nodePort int) string {
	return simkit.FormatListener(protocol, port, nodePort)
}

// AccountSwitcher is a Cloud that serves more than one account (a
// DigitalOcean team, an OpenStack project, a Brightbox account, a Triton
// account, a Rancher environment), for the conformance suite's
// node-deletion guard case: a simulated cloud's simkit.Accounts.
type AccountSwitcher = simkit.Accounts

// Credentials are settings that point a provider at an account.
type Credentials = simkit.Credentials
