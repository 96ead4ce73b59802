package simkit

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// demoScenario is a simulator's scenario: the header and its own keys.
type demoScenario struct {
	ScenarioHeader
	Things []string `json:"things,omitempty"`
}

func (sc *demoScenario) validate() field.ErrorList {
	return sc.Validate("demo", Operations{Names: map[string]string{"things.list": "GET /things"}})
}

func TestScenarioHeader(t *testing.T) {
	sc, err := LoadScenario([]byte(`
provider: demo
description: 2024
seed: 3
latency: 5ms
provisioningReads: -1
things: [a]
faults:
- {operation: things.list, status: 503, count: 2}
`), (*demoScenario).validate)
	if err != nil {
		t.Fatal(err)
	}
	c := sc.Common(Operations{Names: map[string]string{"things.list": "GET /things"}})
	if sc.Description != "2024" || sc.ProvisioningReads != -1 || !slices.Equal(sc.Things, []string{"a"}) ||
		c.Seed != 3 || c.Latency != 5*time.Millisecond || len(c.Faults) != 1 || c.Faults[0].Op != "GET /things" || c.Faults[0].Count != 2 {
		t.Errorf("scenario %+v, common %+v", sc, c)
	}

	_, err = LoadScenario([]byte("provider: other\nlatency: 30\nprovisioningReads: -2\nfaults: [{operation: nope, status: 500}]\nthing: [b]\n"), (*demoScenario).validate)
	want := `invalid scenario: [unknown field "thing", provider: Unsupported value: "other": supported values: "demo", ` +
		`latency: Invalid value: "30": must be a duration such as "30ms" or "2s", ` +
		`provisioningReads: Invalid value: -2: must be -1 (settled at once), 0 (the default) or more, ` +
		`faults[0].operation: Invalid value: "nope": unknown operation: want "*", an endpoint or one of things.list]`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	if _, err := LoadScenario([]byte("latency: [1]\n"), (*demoScenario).validate); err == nil || !strings.Contains(err.Error(), "field demoScenario.ScenarioHeader.latency") {
		t.Errorf("a list for a string: %v", err)
	}
}
