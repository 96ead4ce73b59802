// Command promcheck loads Prometheus configuration files with Prometheus's
// own loader and checks the scrape job ccmkit's Triton metrics controller
// (triton-cmon) writes: its triton_sd_configs discovery, TLS files and the
// node relabelling. It is a module of its own, so that Prometheus and its
// dependencies never reach the library's go.mod.
//
// `go test ./...` checks providers/triton/testdata/cmon-prometheus.yml, the
// configuration the controller writes with its default settings (a test in
// providers/triton keeps that file current); `go run . FILE...` checks
// others, such as the prometheus.yml of a ConfigMap an end-to-end test read
// (check.sh does both).
package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery/triton"
	"github.com/prometheus/prometheus/model/relabel"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: promcheck FILE...")
		os.Exit(2)
	}
	failed := false
	for _, f := range os.Args[1:] {
		if err := check(f); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			failed = true
			continue
		}
		fmt.Printf("%s: ok\n", f)
	}
	if failed {
		os.Exit(1)
	}
}

// check loads file as Prometheus does at start-up and checks its
// triton-cmon-* job.
func check(file string) error {
	cfg, err := config.LoadFile(file, false, promslog.NewNopLogger())
	if err != nil {
		return fmt.Errorf("refused by Prometheus's loader: %w", err)
	}
	var jobs []*config.ScrapeConfig
	for _, sc := range cfg.ScrapeConfigs {
		if strings.HasPrefix(sc.JobName, "triton-cmon-") {
			jobs = append(jobs, sc)
		}
	}
	if len(jobs) != 1 {
		return fmt.Errorf("%d triton-cmon-* scrape jobs, want 1", len(jobs))
	}
	return checkJob(jobs[0])
}

// checkJob checks the job as Prometheus parsed it.
func checkJob(sc *config.ScrapeConfig) error {
	var errs []error
	tls := sc.HTTPClientConfig.TLSConfig
	if sc.Scheme != "https" {
		errs = append(errs, fmt.Errorf("scheme %q, want https: CMON serves TLS only", sc.Scheme))
	}
	if path.Base(tls.CertFile) != "tls.crt" || path.Base(tls.KeyFile) != "tls.key" || path.Dir(tls.CertFile) != path.Dir(tls.KeyFile) {
		errs = append(errs, fmt.Errorf("scrape TLS files %q and %q, want tls.crt and tls.key of one mounted Secret", tls.CertFile, tls.KeyFile))
	}
	var sds []*triton.SDConfig
	for _, d := range sc.ServiceDiscoveryConfigs {
		if t, ok := d.(*triton.SDConfig); ok {
			sds = append(sds, t)
		}
	}
	if len(sds) != 1 {
		return errors.Join(append(errs, fmt.Errorf("%d triton_sd_configs, want 1", len(sds)))...)
	}
	sd := sds[0]
	switch {
	case sd.Role != "container":
		errs = append(errs, fmt.Errorf("triton_sd_configs role %q, want container", sd.Role))
	case len(sd.Groups) != 1 || !strings.HasPrefix(sd.Groups[0], "k8s-"):
		errs = append(errs, fmt.Errorf("triton_sd_configs groups %v, want the cluster's one k8s-<cluster>", sd.Groups))
	case sd.Endpoint != sd.DNSSuffix || !strings.HasPrefix(sd.Endpoint, "cmon."):
		errs = append(errs, fmt.Errorf("triton_sd_configs endpoint %q and dns_suffix %q, want both CMON's host", sd.Endpoint, sd.DNSSuffix))
	case sd.Port != 9163 || sd.Version != 1:
		errs = append(errs, fmt.Errorf("triton_sd_configs port %d version %d, want 9163 and 1", sd.Port, sd.Version))
	case sd.TLSConfig.CertFile != tls.CertFile || sd.TLSConfig.KeyFile != tls.KeyFile:
		errs = append(errs, errors.New("triton_sd_configs authenticates with other TLS files than the scrapes"))
	}
	if !slices.ContainsFunc(sc.RelabelConfigs, nodeRelabel) {
		errs = append(errs, errors.New("no relabelling of __meta_triton_machine_alias to node"))
	}
	return errors.Join(errs...)
}

// nodeRelabel reports whether r copies the machine's alias to the node
// label.
func nodeRelabel(r *relabel.Config) bool {
	return r.Action == relabel.Replace && r.TargetLabel == "node" &&
		len(r.SourceLabels) == 1 && r.SourceLabels[0] == "__meta_triton_machine_alias"
}
