package frameworktest_test

import (
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// fakeSim records what SimCloud passes on.
type fakeSim struct {
	simkit.Cloud // nil: a method not overridden panics
	injected     []simkit.Fault
	secret       string
}

func (f *fakeSim) Inject(fault simkit.Fault) func() {
	f.injected = append(f.injected, fault)
	return func() {}
}

func (f *fakeSim) LoadBalancers() []simkit.LoadBalancer {
	return []simkit.LoadBalancer{{ID: "lb-1", Name: "a", Listeners: []string{"TCP:80->:30080"}, Members: []string{"i-1"}}}
}

type rotatingFakeSim struct{ *fakeSim }

func (r rotatingFakeSim) RotateSecret(s string) { r.secret = s }

type mintingFakeSim struct{ rotatingFakeSim }

func (mintingFakeSim) NewSecret() string { return "minted" }

func TestSimCloud(t *testing.T) {
	sim := &fakeSim{}
	c := frameworktest.SimCloud(sim)
	if _, ok := c.(frameworktest.SecretRotator); ok {
		t.Error("a cloud without RotateSecret is a SecretRotator")
	}
	c.Fail(frameworktest.FaultProxyNotFound)
	c.Fail(frameworktest.Fault{Status: 500, Delay: time.Second})
	want := []simkit.Fault{frameworktest.FaultProxyNotFound.SimFault(), {Status: 500, Delay: time.Second}}
	if len(sim.injected) != 2 || sim.injected[0].ContentType != want[0].ContentType || sim.injected[0].Body != want[0].Body ||
		sim.injected[1].Status != 500 || sim.injected[1].Delay != time.Second || sim.injected[1].Body != nil {
		t.Errorf("injected %+v, want %+v", sim.injected, want)
	}
	if lbs := c.LoadBalancers(); len(lbs) != 1 || lbs[0].ID != "lb-1" || lbs[0].Members[0] != "i-1" {
		t.Errorf("LoadBalancers = %+v", lbs)
	}

	rot := rotatingFakeSim{&fakeSim{}}
	r, ok := frameworktest.SimCloud(rot).(frameworktest.SecretRotator)
	if !ok {
		t.Fatal("a cloud with RotateSecret is not a SecretRotator")
	}
	r.RotateSecret("new")
	if rot.secret != "new" {
		t.Errorf("RotateSecret reached %q", rot.secret)
	}
	if _, ok := r.(frameworktest.SecretMinter); ok {
		t.Error("a cloud without NewSecret is a SecretMinter")
	}

	mint := mintingFakeSim{rotatingFakeSim{&fakeSim{}}}
	c = frameworktest.SimCloud(mint)
	m, ok := c.(frameworktest.SecretMinter)
	if !ok {
		t.Fatal("a cloud with RotateSecret and NewSecret is not a SecretMinter")
	}
	if got := m.NewSecret(); got != "minted" {
		t.Errorf("NewSecret = %q, want the cloud's %q", got, "minted")
	}
	r, ok = c.(frameworktest.SecretRotator)
	if !ok {
		t.Fatal("a SecretMinter is not a SecretRotator")
	}
	r.RotateSecret("minted")
	if mint.secret != "minted" {
		t.Errorf("RotateSecret reached %q", mint.secret)
	}
}
