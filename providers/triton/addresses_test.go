package triton

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/joyent/triton-go/compute"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// A machine whose ips and networks arrays do not pair up has its NICs
// read instead, once per TTL, and gets the same addresses; an IP on a
// network the account does not list is classified by the address.
func TestAddressesFromNICs(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	id := sim.AddMachine(tritonsim.Machine{Name: "node-1"}).ID
	_, ctx := ktesting.NewTestContext(t)
	vars := sim.Env(sim.URL())
	cfg := &Config{URL: vars["TRITON_URL"], Account: vars["TRITON_ACCOUNT"]}
	cfg.KeyMaterial = config.NewSecret(vars["TRITON_KEY_MATERIAL"])
	a, err := connect(ctx, cfg, cloudapi.NewClient(cloudapi.Options{MaxRetries: -1}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Compute().Instances().Get(ctx, &compute.GetInstanceInput{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	book := newAddressBook(a, cfg, time.Minute)
	want, err := book.of(ctx, m)
	if err != nil || len(want) < 3 {
		t.Fatalf("addresses from the machine: %v, %v", want, err)
	}
	const nicsOp = "GET /{account}/machines/{id}/nics"
	unpaired := *m
	unpaired.IPs = unpaired.IPs[:1]
	for range 2 {
		got, err := book.of(ctx, &unpaired)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("addresses from the NICs differ (-machine +NICs):\n%s", diff)
		}
	}
	if n := sim.Stats()[nicsOp]; n != 1 {
		t.Errorf("%d NIC reads for two lookups within the TTL, want 1", n)
	}
	// A NIC list that fails is an error, not an empty address list.
	defer sim.Fail(http.StatusInternalServerError, nicsOp)()
	other := unpaired
	other.ID = sim.AddMachine(tritonsim.Machine{}).ID
	if got, err := book.of(ctx, &other); err == nil {
		t.Errorf("with the NIC list failing: %v, nil; want an error", got)
	}
}

func TestIsPublicByAddress(t *testing.T) {
	for ip, want := range map[string]bool{
		"165.225.128.10": true, "10.0.0.5": false, "192.168.1.1": false, "172.16.0.1": false,
		"fd00::1": false, "2001:db8::1": true, "169.254.1.1": false, "garbage": false,
	} {
		if got := isPublic(nil, ip); got != want {
			t.Errorf("isPublic(unknown network, %s) = %v, want %v", ip, got, want)
		}
	}
}
