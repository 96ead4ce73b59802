package framework

import (
	"context"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
)

// TestServiceLocksHoldOnlyWhatIsInUse: the per-Service lock map keeps no
// entry once nobody holds or waits for it, whatever path the caller took.
func TestServiceLocksHoldOnlyWhatIsInUse(t *testing.T) {
	var locks serviceLocks
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			defer locks.lock(types.UID([]string{"a", "b", "c"}[i%3]))()
		})
	}
	wg.Wait()
	if n := locks.len(); n != 0 {
		t.Fatalf("%d entries left after every lock was released, want 0", n)
	}
}

// routesProvider's Routes returns a typed nil, as a provider whose routes
// are off might.
type routesProvider struct{}

type nilRoutes struct{ cloudprovider.Routes }

func (routesProvider) Name() string                     { return "typed-nil" }
func (routesProvider) Init(context.Context, *Env) error { return nil }
func (routesProvider) Routes() cloudprovider.Routes     { return (*nilRoutes)(nil) }

func TestTypedNilCapabilityIsAbsent(t *testing.T) {
	cloud, err := NewCloud(context.Background(), routesProvider{}, &Env{})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := cloud.Routes(); ok {
		t.Fatalf("Routes() = %v, true; a provider returning a nil *routes has no routes", r)
	}
}
