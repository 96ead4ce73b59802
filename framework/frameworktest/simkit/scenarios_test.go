package simkit

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// demoServer is the Server demoScenarios seeds: the things it was given.
type demoServer struct {
	common Common
	things []string
}

// demoNew is the demo simulator's New.
func demoNew(c Common) *demoServer { return &demoServer{common: c} }

// add refuses "taken" as demo's Add* methods refuse a resource: with a
// panic.
func (s *demoServer) add(thing string) {
	if thing == "taken" {
		panic("demosim: thing taken exists already")
	}
	s.things = append(s.things, thing)
}

var demoOperations = ServedOperations(map[string]string{"things.list": "GET /things"},
	func() []string { return []string{"GET /things", "POST /things"} })

// Options are the options of a demo Server.
func (sc *demoScenario) Options() Common { return sc.Common(demoOperations) }

func demoScenarios(applyToCheck bool) Scenarios[demoScenario, *demoScenario, Common, *demoServer] {
	return Scenarios[demoScenario, *demoScenario, Common, *demoServer]{
		Provider:   "demo",
		Operations: demoOperations,
		Check: func(sc *demoScenario) []error {
			if slices.Contains(sc.Things, "") {
				return []error{errors.New("things: an empty thing")}
			}
			return nil
		},
		New: demoNew,
		Apply: func(sc *demoScenario, s *demoServer) (err error) {
			defer RecoverRefusal("demosim: ", &err)
			for _, th := range sc.Things {
				s.add(th)
			}
			return nil
		},
		ApplyToCheck: applyToCheck,
	}
}

func TestScenarios(t *testing.T) {
	k := demoScenarios(true)
	s, err := k.NewServer([]byte("provider: demo\nthings: [a, b]\nfaults: [{operation: POST /things, status: 500}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.things, []string{"a", "b"}) || len(s.common.Faults) != 1 || s.common.Faults[0].Op != "POST /things" {
		t.Errorf("server %+v", s)
	}

	for name, tc := range map[string]struct {
		yaml         string
		applyToCheck bool
		want         string
	}{
		"header and check": {"provider: other\nthings: ['']\n", true,
			`invalid scenario: [provider: Unsupported value: "other": supported values: "demo", things: an empty thing]`},
		"unknown endpoint": {"faults: [{operation: DELETE /things, status: 500}]\n", true, "unknown operation"},
		"refused on check": {"things: [taken]\n", true, "invalid scenario: thing taken exists already"},
		"refused on apply": {"things: [taken]\n", false, "applying scenario: thing taken exists already"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := demoScenarios(tc.applyToCheck).NewServer([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}

	sc, err := k.Load([]byte("things: [x]\n"))
	if err != nil || k.Validate(sc) != nil {
		t.Fatalf("Load: %v; Validate: %v", err, k.Validate(sc))
	}
	sc.Things = append(sc.Things, "taken")
	if err := k.Validate(sc); err == nil || err.Error() != "thing taken exists already" {
		t.Errorf("Validate = %v", err)
	}
}

func TestRecoverRefusalPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "another panic" {
			t.Errorf("recovered %v", r)
		}
	}()
	var err error
	func() {
		defer RecoverRefusal("demosim: ", &err)
		panic("another panic")
	}()
	t.Errorf("the panic did not go on (err %v)", err)
}

func TestErrorFormat(t *testing.T) {
	f := ErrorFormat{
		Codes:    map[int]string{http.StatusNotFound: "Missing"},
		Messages: map[int]string{http.StatusNotFound: "no such thing"},
		Body:     func(status int, code, msg string) any { return fmt.Sprintf("%d %s %s", status, code, msg) },
	}
	for _, tc := range []struct {
		e    ErrorInfo
		want string
	}{
		{ErrorInfo{Status: http.StatusNotFound}, "404 Missing no such thing"},
		{ErrorInfo{Status: http.StatusServiceUnavailable}, "503 service_unavailable Injected fault: Service Unavailable"},
		{ErrorInfo{Status: http.StatusNotFound, Code: "Gone", Message: "later"}, "404 Gone later"},
	} {
		if got := f.ErrorBody(nil, tc.e); got != tc.want {
			t.Errorf("ErrorBody(%+v) = %v, want %s", tc.e, got, tc.want)
		}
	}
	f.OtherCode, f.OtherMessage = "Oops", "it failed"
	if got := f.Error(http.StatusConflict, "thing %d", 3); got.Status != http.StatusConflict || got.Body != "409 Oops thing 3" {
		t.Errorf("Error = %+v", got)
	}
	if got := f.ErrorBody(nil, ErrorInfo{Status: http.StatusConflict}); got != "409 Oops it failed" {
		t.Errorf("ErrorBody with OtherCode and OtherMessage = %v", got)
	}
}

func TestCloudDefaults(t *testing.T) {
	var c struct {
		NoCloudConfig
		NoRoutes
	}
	if c.CloudConfig() != "" || c.Routes() != nil {
		t.Errorf("CloudConfig %q, Routes %v", c.CloudConfig(), c.Routes())
	}
}
