package triton

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of the metrics controller's settings.
const (
	// defaultCMONCertValidity is how long a minted certificate is valid.
	// Thirty days: the controller signs a new one with the account key on
	// its own (no CloudAPI call), so a short life costs nothing, and bounds
	// how long a copy of the certificate's key that leaked (from the Secret
	// or a Prometheus volume) reads the account's metrics. node-triton's
	// cmon-certgen, made by hand, defaults to ten years.
	defaultCMONCertValidity = 30 * 24 * time.Hour
	// defaultCMONResync is how often the controller looks at the tags, the
	// Secret and the ConfigMap again when nothing asks it to sooner.
	defaultCMONResync = 10 * time.Minute
	// defaultCMONPort is CMON's port, when the endpoint's URL has none.
	defaultCMONPort = 9163
	// cmonCertMountRoot is where a Prometheus the Prometheus Operator runs
	// mounts the Secrets it is given (spec.secrets): <root>/<secret name>.
	cmonCertMountRoot = "/etc/prometheus/secrets"
)

// CMONSettings are the metrics controller's settings, part of Config.
type CMONSettings struct {
	URL           string        `json:"url" env:"TRITON_CMON_URL" doc:"CMON's URL, such as https://cmon.us-east-1.triton.zone:9163. Unset: the cmon entry of CloudAPI's services list."`
	Group         string        `json:"group" env:"TRITON_CMON_GROUP" doc:"The CMON group of the cluster's nodes, added to each node machine's triton.cmon.groups tag and scraped by the Prometheus job ([A-Za-z0-9_-], at most 100 characters). Unset: k8s-<cluster name>, other characters replaced by -."`
	Namespace     string        `json:"namespace" env:"TRITON_CMON_NAMESPACE" default:"kube-system" doc:"Namespace of the client certificate's Secret and the Prometheus ConfigMap."`
	Secret        string        `json:"secret" env:"TRITON_CMON_SECRET" default:"triton-cmon-client" doc:"Name of the kubernetes.io/tls Secret holding CMON's client certificate (tls.crt) and its key (tls.key)."`
	ConfigMap     string        `json:"configMap" env:"TRITON_CMON_CONFIGMAP" default:"triton-cmon-prometheus" doc:"Name of the ConfigMap holding the Prometheus configuration (key prometheus.yml) that scrapes the nodes through CMON."`
	CertDir       string        `json:"certDir" env:"TRITON_CMON_CERT_DIR" doc:"Directory where Prometheus has the Secret mounted: the scrape job reads tls.crt and tls.key there. Unset: /etc/prometheus/secrets/<secret name>, where the Prometheus Operator mounts the Secrets it is given."`
	CertValidity  time.Duration `json:"certValidity" env:"TRITON_CMON_CERT_VALIDITY" default:"720h" doc:"How long a client certificate is valid. It is signed locally with the account key, so a short life costs no CloudAPI call."`
	RenewBefore   time.Duration `json:"renewBefore" env:"TRITON_CMON_RENEW_BEFORE" doc:"A new certificate replaces the Secret's when less than this remains of its validity. Unset: a third of TRITON_CMON_CERT_VALIDITY."`
	Resync        time.Duration `json:"resync" env:"TRITON_CMON_RESYNC" default:"10m" doc:"How often the controller checks the node machines' tags, the Secret and the ConfigMap when no Node changes."`
	CAFile        string        `json:"caFile" env:"TRITON_CMON_CA_FILE" doc:"Path, in the Prometheus container, of the CA certificate CMON's own certificate is checked against (a private Triton's CA). Unset: the system's roots, which Triton's public cloud needs."`
	SkipTLSVerify bool          `json:"skipTLSVerify" env:"TRITON_CMON_SKIP_TLS_VERIFY" doc:"The scrape job does not check CMON's certificate (a test install's self-signed one). Never in production."`
}

// cmonGroupPattern is a CMON group (triton.cmon.groups entries).
var cmonGroupPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// validate checks the settings their tags cannot check.
func (s *CMONSettings) validate() error {
	var errs []error
	if s.URL != "" {
		if _, err := parseCMONURL(s.URL); err != nil {
			errs = append(errs, fmt.Errorf("TRITON_CMON_URL: %w", err))
		}
	}
	if s.Group != "" && !cmonGroupPattern.MatchString(s.Group) {
		errs = append(errs, fmt.Errorf("TRITON_CMON_GROUP: %q is not a CMON group ([A-Za-z0-9_-], 1 to 100 characters)", s.Group))
	}
	if s.Namespace != "" {
		for _, m := range validation.IsDNS1123Label(s.Namespace) {
			errs = append(errs, fmt.Errorf("TRITON_CMON_NAMESPACE: %q: %s", s.Namespace, m))
		}
	}
	for _, n := range []struct{ env, name string }{{"TRITON_CMON_SECRET", s.Secret}, {"TRITON_CMON_CONFIGMAP", s.ConfigMap}} {
		if n.name == "" {
			continue
		}
		for _, m := range validation.IsDNS1123Subdomain(n.name) {
			errs = append(errs, fmt.Errorf("%s: %q: %s", n.env, n.name, m))
		}
	}
	if s.CertDir != "" && !path.IsAbs(s.CertDir) {
		errs = append(errs, fmt.Errorf("TRITON_CMON_CERT_DIR: %q is not an absolute path", s.CertDir))
	}
	if s.CertValidity < 0 || s.CertValidity > 0 && s.CertValidity < 2*time.Second {
		errs = append(errs, fmt.Errorf("TRITON_CMON_CERT_VALIDITY: %s is too short (at least 2s)", s.CertValidity))
	}
	if s.RenewBefore < 0 || s.RenewBefore > 0 && s.RenewBefore >= s.certValidity() {
		errs = append(errs, fmt.Errorf("TRITON_CMON_RENEW_BEFORE: %s is not between 0 and TRITON_CMON_CERT_VALIDITY (%s)", s.RenewBefore, s.certValidity()))
	}
	if s.CAFile != "" && !path.IsAbs(s.CAFile) {
		errs = append(errs, fmt.Errorf("TRITON_CMON_CA_FILE: %q is not an absolute path", s.CAFile))
	}
	if s.Resync < 0 {
		errs = append(errs, fmt.Errorf("TRITON_CMON_RESYNC: %s is negative", s.Resync))
	}
	return errors.Join(errs...)
}

// withDefaults is s with every unset setting at its default.
func (s CMONSettings) withDefaults() CMONSettings {
	if s.Namespace == "" {
		s.Namespace = "kube-system"
	}
	if s.Secret == "" {
		s.Secret = "triton-cmon-client"
	}
	if s.ConfigMap == "" {
		s.ConfigMap = "triton-cmon-prometheus"
	}
	if s.CertDir == "" {
		s.CertDir = path.Join(cmonCertMountRoot, s.Secret)
	}
	s.CertValidity = s.certValidity()
	if s.RenewBefore == 0 {
		s.RenewBefore = s.CertValidity / 3
	}
	if s.Resync == 0 {
		s.Resync = defaultCMONResync
	}
	return s
}

func (s *CMONSettings) certValidity() time.Duration {
	if s.CertValidity == 0 {
		return defaultCMONCertValidity
	}
	return s.CertValidity
}

// cmonGroup is the cluster's CMON group: TRITON_CMON_GROUP, or
// k8s-<cluster> with every character CMON does not take replaced by -; a
// name longer than CMON's 100 characters is cut and ends with a hash of
// the whole, so two long cluster names stay apart.
func (s *CMONSettings) cmonGroup(cluster string) string {
	if s.Group != "" {
		return s.Group
	}
	g := []byte("k8s-" + cluster)
	for i, c := range g {
		if !cmonGroupPattern.Match([]byte{c}) {
			g[i] = '-'
		}
	}
	if len(g) <= 100 {
		return string(g)
	}
	sum := sha256.Sum256([]byte(cluster))
	return string(g[:91]) + "-" + hex.EncodeToString(sum[:4])
}

// cmonEndpoint is where CMON answers: the host Prometheus's
// triton_sd_configs names as endpoint and dns_suffix (targets are
// <machine UUID>.<host>), and its port.
type cmonEndpoint struct {
	host string
	port int
}

// parseCMONURL reads a CMON URL as CloudAPI's services list gives it
// (https://cmon.<datacenter>.<suffix>:9163): https, a DNS name, a port or
// none (9163), no path.
func parseCMONURL(raw string) (cmonEndpoint, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return cmonEndpoint{}, fmt.Errorf("%q is not a URL", raw)
	case u.Scheme != "https" || u.Hostname() == "":
		return cmonEndpoint{}, fmt.Errorf("%q is not an https URL with a host (CMON serves https only)", raw)
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil:
		return cmonEndpoint{}, fmt.Errorf("%q has a path, query or user: CMON's URL is https://<host>[:port]", raw)
	case net.ParseIP(u.Hostname()) != nil:
		return cmonEndpoint{}, fmt.Errorf("%q names CMON by address: its targets are <machine UUID>.<CMON host>, which needs a DNS name", raw)
	}
	e := cmonEndpoint{host: strings.ToLower(u.Hostname()), port: defaultCMONPort}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return cmonEndpoint{}, fmt.Errorf("%q has no valid port", raw)
		}
		e.port = n
	}
	return e, nil
}
