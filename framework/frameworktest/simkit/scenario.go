package simkit

import (
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/yaml"
)

// DecodeScenario decodes a YAML (or JSON) scenario. An unknown or repeated
// key does not stop it: the scenario is then decoded leniently and the
// key's error returned as strictErr, to report along with what validation
// finds; err is for data that does not decode at all.
func DecodeScenario[T any](data []byte) (sc *T, strictErr, err error) {
	sc = new(T)
	if strictErr = yaml.UnmarshalStrict(data, sc); strictErr != nil {
		*sc = *new(T)
		if err := yaml.Unmarshal(data, sc); err != nil {
			return nil, nil, fmt.Errorf("parsing scenario: %w", err)
		}
	}
	return sc, strictErr, nil
}

// LoadScenario decodes a scenario as DecodeScenario does and validates it,
// reporting every problem at once, unknown keys included: "invalid
// scenario: " and the problems, joined.
func LoadScenario[T any](data []byte, validate func(*T) []error) (*T, error) {
	sc, strictErr, err := DecodeScenario[T](data)
	if err != nil {
		return nil, err
	}
	errs := validate(sc)
	if strictErr != nil {
		errs = append([]error{strictErr}, errs...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid scenario: %w", errors.Join(errs...))
	}
	return sc, nil
}

// ScenarioFault is a fault as scenario files write it:
//
//	faults:
//	- operation: servers.list    # "*", an endpoint ("GET /v2/things") or a simulator's short name
//	  status: 503                # an HTTP error status, 400-599
//	  rate: 0.1                  # the fraction of requests that fail; default all
//	  retryAfter: 2s             # Retry-After header
//	  message: maintenance       # the error body's message
//	  delay: 100ms               # latency for the matching requests only
//	  count: 3                   # only the next 3 matching requests
//	  reset: true                # close the connection without answering
type ScenarioFault struct {
	Operation  string  `json:"operation"`
	Status     int     `json:"status,omitempty"`
	Message    string  `json:"message,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	RetryAfter string  `json:"retryAfter,omitempty"`
	Delay      string  `json:"delay,omitempty"`
	Count      int     `json:"count,omitempty"`
	Reset      bool    `json:"reset,omitempty"`
}

// OpResolver maps a scenario's operation to a Fault.Op; ok is false for
// an unknown operation.
type OpResolver func(operation string) (op string, ok bool)

// ResolveOperation is the usual OpResolver: "*" is every endpoint (""), a
// short name of names is its endpoint or pattern, and an operation
// isEndpoint accepts is itself.
func ResolveOperation(names map[string]string, isEndpoint func(op string) bool) OpResolver {
	return func(op string) (string, bool) {
		switch {
		case op == "*":
			return "", true
		case names[op] != "":
			return names[op], true
		case isEndpoint(op):
			return op, true
		}
		return "", false
	}
}

// Validate reports every problem with f; field prefixes the messages
// (e.g. "faults[2]").
func (f ScenarioFault) Validate(field string, resolve OpResolver) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(field+format, args...)) }
	if _, ok := resolve(f.Operation); !ok {
		bad(".operation: unknown operation %q", f.Operation)
	}
	if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
		bad(".status: %d is not an HTTP error status", f.Status)
	}
	if f.Status == 0 && f.Delay == "" && !f.Reset {
		bad(": needs a status, a delay or reset")
	}
	if f.Rate < 0 || f.Rate > 1 {
		bad(".rate: %v is not between 0 and 1", f.Rate)
	}
	if _, err := ParseDuration(f.RetryAfter); err != nil {
		bad(".retryAfter: %v", err)
	}
	if _, err := ParseDuration(f.Delay); err != nil {
		bad(".delay: %v", err)
	}
	return errs
}

// Fault converts a valid f.
func (f ScenarioFault) Fault(resolve OpResolver) Fault {
	op, _ := resolve(f.Operation)
	retryAfter, _ := ParseDuration(f.RetryAfter)
	delay, _ := ParseDuration(f.Delay)
	return Fault{
		Op: op, Status: f.Status, Message: f.Message, RetryAfter: retryAfter,
		Delay: delay, Reset: f.Reset, Rate: f.Rate, Count: f.Count,
	}
}

// ParseDuration parses a scenario duration: "" is 0, negatives are errors.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		err = fmt.Errorf("%q is negative", s)
	}
	return d, err
}
