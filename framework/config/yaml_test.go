package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type pool struct {
	Name    string            `json:"name"`
	Port    uint16            `json:"port"`
	Weight  int8              `json:"weight"`
	Timeout *time.Duration    `json:"timeout"`
	Labels  map[string]string `json:"labels"`
}

type pools struct {
	Pools   []pool          `json:"pools"`
	ByName  map[string]pool `json:"byName"`
	Secrets []Secret        `json:"secrets"`
	Raw     []byte          `json:"raw"`
}

func TestYAMLDecode(t *testing.T) {
	minute := time.Minute
	tests := []struct {
		name    string
		in      string
		want    pools
		wantErr []string
	}{
		{
			name: "nested lists and maps",
			in: `
pools:
- {name: a, port: 80, weight: -3, timeout: 1m, labels: {tier: 1}}
byName:
  b: {name: b, port: 443}
secrets: [x, "y"]
raw: aGk=
`,
			want: pools{
				Pools:   []pool{{Name: "a", Port: 80, Weight: -3, Timeout: &minute, Labels: map[string]string{"tier": "1"}}},
				ByName:  map[string]pool{"b": {Name: "b", Port: 443}},
				Secrets: []Secret{NewSecret("x"), NewSecret("y")},
				Raw:     []byte("hi"),
			},
		},
		{
			name: "nulls leave zero values",
			in:   "pools: ~\nbyName:\n",
			want: pools{},
		},
		{
			name: "problems inside lists and maps name the path",
			in: `
pools:
- {name: a}
- {name: b, prot: 80, port: 70000, weight: 1.5}
byName:
  c: {timeout: forever}
secrets: [ok, 42]
`,
			wantErr: []string{
				`unknown key "pools[1].prot"`,
				`key "pools[1].port": 70000 is not an integer in the range of uint16`,
				`key "pools[1].weight": 1.5 is not an integer in the range of int8`,
				`key "byName.c.timeout": invalid duration "forever"`,
				`key "secrets[1]": a secret must be a string, got a number`,
			},
		},
		{
			name:    "unknown keys in a list element reject the list",
			in:      "pools: [{name: a, x: 1}]\n",
			wantErr: []string{`unknown key "pools[0].x"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got pools
			err := YAML.Decode([]byte(tt.in), &got)
			if (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Decode() error = %v, want %q", err, tt.wantErr)
			}
			if err != nil {
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Decode() error does not contain %q:\n%v", s, err)
					}
				}
				if n := len(flatten(err)); n != len(tt.wantErr) {
					t.Errorf("Decode() reported %d problems, want %d:\n%v", n, len(tt.wantErr), err)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestYAMLDecodeArguments(t *testing.T) {
	if YAML.Name() != "yaml" {
		t.Errorf("Name() = %q", YAML.Name())
	}
	var p pools
	for _, out := range []any{nil, p, (*pools)(nil)} {
		if err := YAML.Decode([]byte("pools: []"), out); err == nil {
			t.Errorf("Decode(%T) succeeded, want an error", out)
		}
	}
}
