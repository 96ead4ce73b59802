package simkit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Scenarios is how a simulator is seeded from a scenario file: what its
// LoadScenario, NewFromScenario and Scenario.Validate do alike for every
// cloud. Sc is the simulator's Scenario type, which embeds ScenarioHeader
// and says which Options it asks for, and S its *Server:
//
//	var scenarios = simkit.Scenarios[Scenario, *Scenario, Options, *Server]{
//		Provider:   "skeleton",
//		Operations: scenarioOperations,
//		Check:      (*Scenario).check,
//		New:        New,
//		Apply:      (*Scenario).Apply,
//	}
//
//	func LoadScenario(data []byte) (*Scenario, error)  { return scenarios.Load(data) }
//	func NewFromScenario(data []byte, defaults ...simkit.ScenarioDefault) (*Server, error) {
//		return scenarios.NewServer(data, defaults...)
//	}
//	func (sc *Scenario) Validate() error               { return scenarios.Validate(sc) }
//
// Operations is a variable of its own, which the Scenario's Options reads
// too (ScenarioHeader.Common): Go refuses a variable whose initializer
// refers back to it.
type Scenarios[Sc any, P ScenarioOf[Sc, O], O, S any] struct {
	// Provider is the simulator's name in a scenario's provider field.
	Provider string
	// Operations resolve the operations of the scenario's faults.
	Operations Operations
	// Check reports every problem with what the scenario holds besides
	// its header, each naming its field; nil checks nothing more.
	Check func(P) []error
	// New returns a Server, not listening yet, with options: the
	// simulator's New, given the scenario's Options.
	New func(O) S
	// Apply seeds a Server with the scenario's resources, reporting the
	// first one the cloud refuses.
	Apply func(P, S) error
	// ApplyToCheck checks the resources, once the rest is valid, by
	// seeding a scratch Server with them: the cloud's own rules
	// (references, names in use...) are the scenario's.
	ApplyToCheck bool
}

// ScenarioDefault sets what a valid scenario's header leaves unset, as
// the program serving it chooses: see SettleAfterByDefault.
type ScenarioDefault func(*ScenarioHeader)

// SettleAfterByDefault makes pending resources settle d after they start
// (Common.SettleAfter) unless the scenario says settleAfter itself ("0s"
// keeps time off).
func SettleAfterByDefault(d time.Duration) ScenarioDefault {
	return func(h *ScenarioHeader) {
		if h.SettleAfter == "" && d > 0 {
			h.SettleAfter = ScenarioString(d.String())
		}
	}
}

// ScenarioOf is a pointer to a simulator's Scenario type Sc, which embeds
// ScenarioHeader and asks for a Server's options O.
type ScenarioOf[Sc, O any] interface {
	*Sc
	Header() *ScenarioHeader
	Options() O
}

// Header is the header of the scenario that embeds h.
func (h *ScenarioHeader) Header() *ScenarioHeader { return h }

// Load decodes a YAML (or JSON) scenario and validates it, reporting every
// problem at once, each naming its field, unknown keys included.
func (k Scenarios[Sc, P, O, S]) Load(data []byte) (P, error) {
	sc, err := LoadScenario(data, func(sc *Sc) []error { return k.problems(sc) })
	return P(sc), err
}

// Validate reports every problem with sc, as Load does.
func (k Scenarios[Sc, P, O, S]) Validate(sc P) error {
	return utilerrors.NewAggregate(k.problems(sc))
}

// NewServer returns a Server, not listening yet, seeded from a scenario,
// with defaults for what its header leaves unset (cmd/cloudsim's flags).
func (k Scenarios[Sc, P, O, S]) NewServer(data []byte, defaults ...ScenarioDefault) (S, error) {
	sc, err := k.Load(data)
	if err != nil {
		return *new(S), err
	}
	for _, d := range defaults {
		d(sc.Header())
	}
	s := k.New(sc.Options())
	if err := k.Apply(sc, s); err != nil {
		return *new(S), fmt.Errorf("applying scenario: %w", err)
	}
	return s, nil
}

func (k Scenarios[Sc, P, O, S]) problems(sc P) []error {
	errs := AsErrors(sc.Header().Validate(k.Provider, k.Operations))
	if k.Check != nil {
		errs = append(errs, k.Check(sc)...)
	}
	if len(errs) == 0 && k.ApplyToCheck {
		if err := k.Apply(sc, k.New(sc.Options())); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// AsErrors returns list (a field.ErrorList...) as a []error.
func AsErrors[E error](list []E) []error {
	out := make([]error, 0, len(list))
	for _, err := range list {
		out = append(out, err)
	}
	return out
}

// ServedOperations resolves a scenario fault's operation: "*", one of the
// short names, or one of the endpoints the simulator serves, which
// endpoints lists when first asked (typically a fresh Server's:
// New(Options{}).Operations()).
func ServedOperations(names map[string]string, endpoints func() []string) Operations {
	served := sync.OnceValue(endpoints)
	return Operations{Names: names, IsEndpoint: func(op string) bool { return slices.Contains(served(), op) }}
}

// RecoverRefusal turns the panic of a simulator's Add* method refusing a
// resource (a string starting with prefix, e.g. "gbsim: ") into *err,
// without the prefix, for an Apply that seeds a Server with them:
//
//	defer simkit.RecoverRefusal("gbsim: ", &err)
//
// Any other panic goes on.
func RecoverRefusal(prefix string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	msg, ok := r.(string)
	if !ok || !strings.HasPrefix(msg, prefix) {
		panic(r)
	}
	*err = errors.New(strings.TrimPrefix(msg, prefix))
}
