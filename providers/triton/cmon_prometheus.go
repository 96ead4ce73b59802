package triton

import (
	"context"
	"fmt"
	"maps"
	"path"

	"github.com/joyent/triton-go/compute"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// CMONConfigMapKey is the key of the ConfigMap's Prometheus configuration:
// a prometheus.yml with one scrape job, or the job to copy into one's own.
const CMONConfigMapKey = "prometheus.yml"

// The Prometheus configuration, as much of it as the job uses, in
// Prometheus's own field names (config.ScrapeConfig, triton.SDConfig).
type (
	promConfig struct {
		ScrapeConfigs []promScrapeConfig `json:"scrape_configs"`
	}
	promScrapeConfig struct {
		JobName        string         `json:"job_name"`
		Scheme         string         `json:"scheme"`
		TLSConfig      promTLSConfig  `json:"tls_config"`
		TritonSDConfig []promTritonSD `json:"triton_sd_configs"`
		Relabel        []promRelabel  `json:"relabel_configs"`
	}
	promTLSConfig struct {
		CAFile             string `json:"ca_file,omitempty"`
		CertFile           string `json:"cert_file"`
		KeyFile            string `json:"key_file"`
		InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
	}
	promTritonSD struct {
		Account   string        `json:"account"`
		DNSSuffix string        `json:"dns_suffix"`
		Endpoint  string        `json:"endpoint"`
		Groups    []string      `json:"groups"`
		Port      int           `json:"port"`
		Role      string        `json:"role"`
		Version   int           `json:"version"`
		TLSConfig promTLSConfig `json:"tls_config"`
	}
	promRelabel struct {
		SourceLabels []string `json:"source_labels"`
		TargetLabel  string   `json:"target_label"`
	}
)

// cmonPromJob is what the scrape job depends on.
type cmonPromJob struct {
	cluster, account, group string
	endpoint                cmonEndpoint
	// certDir is where Prometheus has the Secret mounted; caFile and
	// insecure say how CMON's own certificate is checked.
	certDir, caFile string
	insecure        bool
}

// prometheusConfig is the Prometheus configuration that scrapes the
// cluster's nodes through CMON: one job, its targets from CMON's discovery
// of the cluster's group (<machine UUID>.<CMON host>:<port>), over TLS
// with the Secret's certificate, each series labelled node=<machine
// alias>, which is the Node's name where machines are named after their
// Nodes, as the Triton provisioners do.
func prometheusConfig(j cmonPromJob) ([]byte, error) {
	tlsc := promTLSConfig{
		CAFile:             j.caFile,
		CertFile:           path.Join(j.certDir, corev1.TLSCertKey),
		KeyFile:            path.Join(j.certDir, corev1.TLSPrivateKeyKey),
		InsecureSkipVerify: j.insecure,
	}
	cfg := promConfig{ScrapeConfigs: []promScrapeConfig{{
		JobName:   "triton-cmon-" + j.cluster,
		Scheme:    "https",
		TLSConfig: tlsc,
		TritonSDConfig: []promTritonSD{{
			Account: j.account, DNSSuffix: j.endpoint.host, Endpoint: j.endpoint.host,
			Groups: []string{j.group}, Port: j.endpoint.port, Role: "container", Version: 1, TLSConfig: tlsc,
		}},
		Relabel: []promRelabel{{SourceLabels: []string{"__meta_triton_machine_alias"}, TargetLabel: "node"}},
	}}}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the Prometheus configuration: %w", err)
	}
	return append([]byte("# Written by the triton-cmon controller of the Triton cloud-controller-manager: edits are overwritten.\n"), out...), nil
}

// cmonEndpoint returns CMON's endpoint: TRITON_CMON_URL, else the cmon
// entry of CloudAPI's services list, read once.
func (c *cmonController) cmonEndpoint(ctx context.Context) (cmonEndpoint, error) {
	if c.endpoint != nil {
		return *c.endpoint, nil
	}
	services, err := cloud.Guarded("services.list", func() ([]*compute.Service, error) {
		return c.api.Compute().Services().List(withOp(ctx, "services.list"), &compute.ListServicesInput{})
	})
	if err != nil {
		return cmonEndpoint{}, fmt.Errorf("listing CloudAPI's services to find CMON (TRITON_CMON_URL names it instead): %w", err)
	}
	for _, s := range services {
		if s != nil && s.Name == "cmon" {
			e, err := parseCMONURL(s.Endpoint)
			if err != nil {
				return cmonEndpoint{}, fmt.Errorf("CloudAPI's services list: cmon: %w (set TRITON_CMON_URL)", err)
			}
			c.endpoint = &e
			return e, nil
		}
	}
	return cmonEndpoint{}, fmt.Errorf("CloudAPI's services list has no cmon: this Triton has no CMON, or set TRITON_CMON_URL")
}

// ensureConfigMap keeps the Prometheus configuration in the ConfigMap: one
// GET, and a write only when the ConfigMap is missing or its
// prometheus.yml differs. Its other keys are left as they are.
func (c *cmonController) ensureConfigMap(ctx context.Context) error {
	e, err := c.cmonEndpoint(ctx)
	if err != nil {
		return err
	}
	s := &c.settings
	want, err := prometheusConfig(cmonPromJob{cluster: c.cluster, account: c.login, group: c.group, endpoint: e, certDir: s.CertDir, caFile: s.CAFile, insecure: s.SkipTLSVerify})
	if err != nil {
		return err
	}
	cms := c.kube.CoreV1().ConfigMaps(s.Namespace)
	cur, err := cms.Get(ctx, s.ConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: s.ConfigMap, Namespace: s.Namespace, Labels: maps.Clone(cmonManagedBy)},
			Data:       map[string]string{CMONConfigMapKey: string(want)},
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating ConfigMap %s/%s: %w", s.Namespace, s.ConfigMap, err)
		}
		klog.FromContext(ctx).Info("Created the Prometheus configuration for CMON", "configMap", klog.KObj(cm))
		return nil
	case err != nil:
		return fmt.Errorf("reading ConfigMap %s/%s: %w", s.Namespace, s.ConfigMap, err)
	case cur.Data[CMONConfigMapKey] == string(want):
		return nil
	}
	next := cur.DeepCopy()
	if next.Data == nil {
		next.Data = map[string]string{}
	}
	next.Data[CMONConfigMapKey] = string(want)
	if _, err := cms.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating ConfigMap %s/%s: %w", s.Namespace, s.ConfigMap, err)
	}
	klog.FromContext(ctx).Info("Updated the Prometheus configuration for CMON", "configMap", klog.KObj(cur))
	return nil
}
