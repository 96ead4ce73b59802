package tritonsim

import (
	"testing"
	"time"

	"github.com/joyent/triton-go/compute"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// TestSettlesWithTime: with Options.SettleAfter (cmd/cloudsim's
// --settle-after), a machine being provisioned, stopped or started, and an
// action's job, settle that long after they start though nobody reads
// them, as Triton's jobs finish on their own; the other account's too.
func TestSettlesWithTime(t *testing.T) {
	s, c := setup(t, Options{Common: simkit.Common{SettleAfter: 5 * time.Millisecond}, ProvisioningReads: 1000})
	m, err := c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: DefaultPackage, Image: imageID(t, c, "base-64-lts")})
	if err != nil || m.State != StateProvisioning {
		t.Fatalf("created %+v, %v", m, err)
	}
	state := func(s *Server, id, want string) func() bool {
		return func() bool { got, _ := s.Machine(id); return got.State == want }
	}
	simkit.WaitFor(t, "the machine to be provisioned", state(s, m.ID, StateRunning))
	if err := c.compute.Instances().Stop(ctx(), &compute.StopInstanceInput{InstanceID: m.ID}); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "the machine to stop", state(s, m.ID, StateStopped))
	if err := c.compute.Instances().Rename(ctx(), &compute.RenameInstanceInput{ID: m.ID, Name: "renamed"}); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "the rename's job", func() bool { a := s.Audit(m.ID); return len(a) > 0 && a[0].Action == "rename" })

	o := s.OtherAccountServer()
	om := o.AddMachine(Machine{Name: "o-1", State: StateRunning})
	other := computeAs(t, s, OtherAccountLogin, signerOf(t, o))
	if err := other.Instances().Stop(ctx(), &compute.StopInstanceInput{InstanceID: om.ID}); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "the other account's machine to stop", state(o, om.ID, StateStopped))
}
