package frameworktest

import "github.com/ccmkit/ccmkit/framework/frameworktest/simkit"

// SimCloud is a simulated cloud built on simkit (a <cloud>sim's Cloud()) as
// the suite's Cloud, for a Harness's Target:
//
//	Cloud: frameworktest.SimCloud(sim.Cloud()),
//
// Fail injects f.SimFault(), so a bare status gets the cloud's own error
// body; a cloud with a RotateSecret method is a SecretRotator too, and one
// that has NewSecret besides a SecretMinter. The simulators stay apart
// from this package, which needs the framework.
func SimCloud(c simkit.Cloud) Cloud {
	sc := simCloud{c}
	r, ok := c.(SecretRotator)
	if !ok {
		return sc
	}
	if m, ok := c.(SecretMinter); ok {
		return mintingSimCloud{rotatingSimCloud{sc, r}, m}
	}
	return rotatingSimCloud{sc, r}
}

type simCloud struct{ c simkit.Cloud }

// sim is the simulated cloud itself, for the optional capabilities the
// suite looks for on it (accountsOf).
func (s simCloud) sim() simkit.Cloud { return s.c }

// accountsOf is c as an AccountSwitcher: c itself, or the simulated
// cloud SimCloud wraps.
func accountsOf(c Cloud) (AccountSwitcher, bool) {
	if a, ok := c.(AccountSwitcher); ok {
		return a, true
	}
	if s, ok := c.(interface{ sim() simkit.Cloud }); ok {
		a, ok := s.sim().(AccountSwitcher)
		return a, ok
	}
	return nil, false
}

func (s simCloud) AddInstance(name string) string { return s.c.AddInstance(name) }
func (s simCloud) DeleteInstance(id string)       { s.c.DeleteInstance(id) }
func (s simCloud) ShutdownInstance(id string)     { s.c.ShutdownInstance(id) }
func (s simCloud) Fail(f Fault) (restore func())  { return s.c.Inject(f.SimFault()) }
func (s simCloud) Writes() int                    { return s.c.Writes() }
func (s simCloud) Advance()                       { s.c.Advance() }

func (s simCloud) LoadBalancers() []LoadBalancer { return s.c.LoadBalancers() }

type rotatingSimCloud struct {
	simCloud
	SecretRotator
}

type mintingSimCloud struct {
	rotatingSimCloud
	SecretMinter
}
