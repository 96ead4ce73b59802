package simkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	return sc, strictError(strictErr), nil
}

// strictError strips the decoders' layers from an unknown-key error:
// `error unmarshaling JSON: while decoding JSON: json: unknown field
// "zon"` reads better as `unknown field "zon"`.
func strictError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "json: unknown field "); i >= 0 {
		return errors.New(strings.TrimPrefix(msg[i:], "json: "))
	}
	return err
}

// LoadScenario decodes a scenario as DecodeScenario does and validates it,
// reporting every problem at once, unknown keys included: "invalid
// scenario: " and the problems, as an aggregate.
func LoadScenario[T any, L ~[]E, E error](data []byte, validate func(*T) L) (*T, error) {
	sc, strictErr, err := DecodeScenario[T](data)
	if err != nil {
		return nil, err
	}
	var errs []error
	if strictErr != nil {
		errs = append(errs, strictErr)
	}
	for _, e := range validate(sc) {
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid scenario: %w", utilerrors.NewAggregate(errs))
	}
	return sc, nil
}

// ScenarioHeader is what every simulator's scenario holds besides its
// cloud's resources and settings. A simulator's Scenario embeds it, so its
// keys sit at the top level of the file:
//
//	provider: skeleton           # "" or the simulator's; cmd/cloudsim picks the simulator by it
//	description: three nodes behind a slow API
//	seed: 42                     # seeds fault rates, so runs repeat
//	latency: 30ms                # added to every API request (not /_sim)
//	provisioningReads: 2         # reads until a pending resource settles; -1: at once
//	settleAfter: 2s              # and it settles that long after it started, read or not; default: cmd/cloudsim's --settle-after
//	faults:                      # see ScenarioFault
//	- {operation: "*", delay: 100ms, count: 3}
type ScenarioHeader struct {
	Provider          ScenarioString  `json:"provider,omitempty"`
	Description       ScenarioString  `json:"description,omitempty"`
	Seed              uint64          `json:"seed,omitempty"`
	Latency           ScenarioString  `json:"latency,omitempty"`
	ProvisioningReads int             `json:"provisioningReads,omitempty"`
	SettleAfter       ScenarioString  `json:"settleAfter,omitempty"`
	Faults            []ScenarioFault `json:"faults,omitempty"`
}

// ScenarioString is a string of a ScenarioHeader. It also takes a bare
// YAML number or boolean as its text ("latency: 30", which validation
// then refuses for its missing unit), as a plain string field would:
// sigs.k8s.io/yaml cannot tell the type of an embedded struct's fields.
type ScenarioString string

// UnmarshalJSON takes a JSON string, or a number's or boolean's text.
func (s *ScenarioString) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		*s = ScenarioString(v)
	case float64, bool:
		*s = ScenarioString(data)
	case nil:
		*s = ""
	default: // json names the field in the error
		return &json.UnmarshalTypeError{Value: string(data), Type: reflect.TypeFor[string]()}
	}
	return nil
}

// Validate reports every problem with h, for the simulator called
// provider whose endpoints ops resolves.
func (h *ScenarioHeader) Validate(provider string, ops Operations) field.ErrorList {
	var errs field.ErrorList
	if h.Provider != "" && string(h.Provider) != provider {
		errs = append(errs, field.NotSupported(field.NewPath("provider"), string(h.Provider), []string{provider}))
	}
	errs = append(errs, ValidateDuration(field.NewPath("latency"), string(h.Latency))...)
	errs = append(errs, ValidateDuration(field.NewPath("settleAfter"), string(h.SettleAfter))...)
	if h.ProvisioningReads < -1 {
		errs = append(errs, field.Invalid(field.NewPath("provisioningReads"), h.ProvisioningReads,
			"must be -1 (settled at once), 0 (the default) or more"))
	}
	for i, f := range h.Faults {
		errs = append(errs, f.Validate(field.NewPath("faults").Index(i), ops)...)
	}
	return errs
}

// Common returns the settings h asks for. h must be valid.
func (h *ScenarioHeader) Common(ops Operations) Common {
	latency, _ := ParseDuration(string(h.Latency))
	settle, _ := ParseDuration(string(h.SettleAfter))
	c := Common{Seed: h.Seed, Latency: latency, SettleAfter: settle}
	for _, f := range h.Faults {
		c.Faults = append(c.Faults, f.Fault(ops))
	}
	return c
}

// ScenarioFault is a fault as scenario files write it:
//
//	faults:
//	- operation: servers.list    # "*", an endpoint ("GET /v2/things") or a simulator's short name
//	  status: 503                # an HTTP error status, 400-599
//	  rate: 0.1                  # the fraction of requests that fail; default all
//	  retryAfter: 2s             # Retry-After header, with a status
//	  message: maintenance       # the error body's message
//	  delay: 100ms               # latency for the matching requests only
//	  count: 3                   # only the next 3 matching requests
//	  reset: true                # close the connection without answering
//
// A fault has a status, a delay, or reset. Durations are Go durations
// ("1.5s").
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

// Operations resolves a scenario fault's operation to a Fault.Op: "*" is
// every endpoint (""), a short name is its endpoint or pattern, and an
// operation IsEndpoint accepts is itself.
type Operations struct {
	// Names are the simulator's short names of endpoints or patterns,
	// e.g. "droplets.list": "GET /v2/droplets".
	Names map[string]string
	// IsEndpoint accepts an operation written as Fault.Op takes it.
	IsEndpoint func(op string) bool
}

// Resolve returns the Fault.Op for a scenario's operation; ok is false
// for an unknown one.
func (o Operations) Resolve(op string) (faultOp string, ok bool) {
	switch {
	case op == "*":
		return "", true
	case o.Names[op] != "":
		return o.Names[op], true
	case o.IsEndpoint != nil && o.IsEndpoint(op):
		return op, true
	}
	return "", false
}

// Validate reports every problem with f at p (e.g. faults[2]).
func (f ScenarioFault) Validate(p *field.Path, ops Operations) field.ErrorList {
	var errs field.ErrorList
	if f.Operation == "" {
		errs = append(errs, field.Required(p.Child("operation"), `an endpoint, a short name, or "*" for every endpoint`))
	} else if _, ok := ops.Resolve(f.Operation); !ok {
		errs = append(errs, field.Invalid(p.Child("operation"), f.Operation,
			`unknown operation: want "*", an endpoint or one of `+strings.Join(slices.Sorted(maps.Keys(ops.Names)), ", ")))
	}
	if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
		errs = append(errs, field.Invalid(p.Child("status"), f.Status, "must be an HTTP error status, 400-599"))
	}
	if f.Status == 0 && f.Delay == "" && !f.Reset {
		errs = append(errs, field.Required(p, "one of status, delay or reset"))
	}
	if f.Reset && f.Status != 0 {
		errs = append(errs, field.Forbidden(p.Child("reset"), "a reset connection has no status"))
	}
	if f.RetryAfter != "" && f.Status == 0 {
		errs = append(errs, field.Forbidden(p.Child("retryAfter"), "needs a status"))
	}
	errs = append(errs, ValidateDuration(p.Child("retryAfter"), f.RetryAfter)...)
	errs = append(errs, ValidateDuration(p.Child("delay"), f.Delay)...)
	if f.Rate < 0 || f.Rate > 1 {
		errs = append(errs, field.Invalid(p.Child("rate"), f.Rate, "must be between 0 and 1 (0: every request)"))
	}
	if f.Count < 0 {
		errs = append(errs, field.Invalid(p.Child("count"), f.Count, "must not be negative"))
	}
	return errs
}

// Fault converts a valid f.
func (f ScenarioFault) Fault(ops Operations) Fault {
	op, _ := ops.Resolve(f.Operation)
	retryAfter, _ := ParseDuration(f.RetryAfter)
	delay, _ := ParseDuration(f.Delay)
	return Fault{
		Op: op, Status: f.Status, Message: f.Message, RetryAfter: retryAfter,
		Delay: delay, Reset: f.Reset, Rate: f.Rate, Count: f.Count,
	}
}

// ValidateDuration accepts "" and non-negative Go durations at p.
func ValidateDuration(p *field.Path, s string) field.ErrorList {
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return field.ErrorList{field.Invalid(p, s, `must be a duration such as "30ms" or "2s"`)}
	}
	if d < 0 {
		return field.ErrorList{field.Invalid(p, s, "must not be negative")}
	}
	return nil
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
