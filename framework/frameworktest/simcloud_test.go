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
}
