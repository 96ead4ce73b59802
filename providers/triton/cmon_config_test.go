package triton

import (
	"strings"
	"testing"
	"time"
)

func TestCMONGroupOfCluster(t *testing.T) {
	long := strings.Repeat("a", 120)
	for _, tc := range []struct {
		cluster, set, want string
	}{
		{cluster: "kubernetes", want: "k8s-kubernetes"},
		{cluster: "prod.eu/1 x", want: "k8s-prod-eu-1-x"},
		{cluster: "c_1-A", want: "k8s-c_1-A"},
		{cluster: "c", set: "metrics", want: "metrics"},
	} {
		s := CMONSettings{Group: tc.set}
		if got := s.cmonGroup(tc.cluster); got != tc.want {
			t.Errorf("cmonGroup(%q) = %q, want %q", tc.cluster, got, tc.want)
		}
	}
	a, b := (&CMONSettings{}).cmonGroup(long+"1"), (&CMONSettings{}).cmonGroup(long+"2")
	if len(a) != 100 || !cmonGroupPattern.MatchString(a) || a == b {
		t.Errorf("long cluster names: %q (%d characters) and %q", a, len(a), b)
	}
}

func TestWithCMONGroup(t *testing.T) {
	many := strings.TrimSuffix(strings.Repeat("g,", cmonMaxGroups), ",")
	for _, tc := range []struct {
		tag, want string
		add, err  bool
	}{
		{tag: "", want: "k8s-c", add: true},
		{tag: "a,b", want: "a,b,k8s-c", add: true},
		{tag: "a,k8s-c,b", want: "a,k8s-c,b"},
		{tag: "a,,b", want: "a,b,k8s-c", add: true},
		{tag: "k8s-cc", want: "k8s-cc,k8s-c", add: true},
		{tag: many, want: many, err: true},
	} {
		got, add, err := withCMONGroup(tc.tag, "k8s-c")
		if got != tc.want || add != tc.add || (err != nil) != tc.err {
			t.Errorf("withCMONGroup(%q) = %q, %v, %v; want %q, %v, error %v", tc.tag, got, add, err, tc.want, tc.add, tc.err)
		}
	}
}

func TestParseCMONURL(t *testing.T) {
	for raw, want := range map[string]cmonEndpoint{
		"https://cmon.us-east-1.triton.zone:9163": {host: "cmon.us-east-1.triton.zone", port: 9163},
		"https://CMON.example.com/":               {host: "cmon.example.com", port: 9163},
		"https://cmon.example.com:443":            {host: "cmon.example.com", port: 443},
	} {
		got, err := parseCMONURL(raw)
		if err != nil || got != want {
			t.Errorf("parseCMONURL(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"http://cmon.x:9163", "https://127.0.0.1:9163", "https://cmon.x/v1/discover", "https://u:p@cmon.x", "cmon.x", "https://cmon.x:99999"} {
		if _, err := parseCMONURL(raw); err == nil {
			t.Errorf("parseCMONURL(%q): no error", raw)
		}
	}
}

func TestCMONSettingsValidate(t *testing.T) {
	good := CMONSettings{URL: "https://cmon.x:9163", Namespace: "monitoring", Secret: "s", ConfigMap: "c", CertValidity: time.Hour, RenewBefore: 10 * time.Minute}
	if err := good.validate(); err != nil {
		t.Errorf("good settings: %v", err)
	}
	bad := CMONSettings{
		URL: "http://cmon.x", Group: "a,b", Namespace: "Kube_System", Secret: "S!", ConfigMap: "-c",
		CertDir: "relative", CAFile: "ca.crt", CertValidity: time.Second, RenewBefore: -time.Second, Resync: -time.Second,
	}
	err := bad.validate()
	for _, env := range []string{"TRITON_CMON_URL", "TRITON_CMON_GROUP", "TRITON_CMON_NAMESPACE", "TRITON_CMON_SECRET", "TRITON_CMON_CONFIGMAP",
		"TRITON_CMON_CERT_DIR", "TRITON_CMON_CA_FILE", "TRITON_CMON_CERT_VALIDITY", "TRITON_CMON_RENEW_BEFORE", "TRITON_CMON_RESYNC"} {
		if err == nil || !strings.Contains(err.Error(), env) {
			t.Errorf("bad settings: %v, want an error naming %s", err, env)
		}
	}
	if err := (&CMONSettings{CertValidity: time.Hour, RenewBefore: time.Hour}).validate(); err == nil {
		t.Error("RenewBefore as long as the validity: no error")
	}
	d := CMONSettings{}.withDefaults()
	if d.CertValidity != 30*24*time.Hour || d.RenewBefore != 10*24*time.Hour || d.CertDir != "/etc/prometheus/secrets/triton-cmon-client" {
		t.Errorf("defaults %+v", d)
	}
}

// Config.Validate, which the framework calls at start-up, reports the
// metrics controller's bad settings with the others.
func TestConfigValidatesCMON(t *testing.T) {
	c := Config{CMON: CMONSettings{Group: "not a group"}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "TRITON_CMON_GROUP") {
		t.Errorf("Validate: %v, want an error naming TRITON_CMON_GROUP", err)
	}
}
