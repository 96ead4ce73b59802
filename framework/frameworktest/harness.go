package frameworktest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework"
)

// Harness connects the conformance suite to one provider and its simulated
// cloud. Each call to Setup starts a fresh, empty simulated cloud (stopped
// with t.Cleanup) and returns a new, unconfigured provider that the
// settings in Target point at it.
type Harness interface {
	Setup(t *testing.T) *Target
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

// Fault is an injected API failure: an HTTP status, or a delay longer than
// the client's timeout.
type Fault struct {
	Status int
	Delay  time.Duration
}

// Faults the suite injects: none of them may make InstanceExists say false.
var (
	FaultServerError  = Fault{Status: 500}
	FaultUnauthorized = Fault{Status: 401}
	FaultTimeout      = Fault{Delay: 3 * time.Second}
)

// LoadBalancer is a cloud LB in a form every provider can produce.
type LoadBalancer struct {
	ID   string
	Name string
	// Listeners as "<PROTO>:<port>->:<nodePort>" (FormatListener),
	// sorted.
	Listeners []string
	// Members are the instance IDs behind the LB, sorted.
	Members []string
}

// FormatListener writes a listener as LoadBalancer.Listeners holds it:
// "<PROTO>:<port>->:<nodePort>", the protocol in upper case, e.g.
// "TCP:80->:30080".
func FormatListener(protocol string, port, nodePort int) string {
	return fmt.Sprintf("%s:%d->:%d", strings.ToUpper(protocol), port, nodePort)
}
