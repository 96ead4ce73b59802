package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// defaultSettleAfter is --settle-after's default: long enough that a
// client sees a resource pending, short enough that nobody waits.
const defaultSettleAfter = 2 * time.Second

// shutdownTimeout bounds how long a graceful shutdown waits for requests in
// flight (an injected delay can hold one much longer).
const shutdownTimeout = 5 * time.Second

// run is cloudsim: it serves until ctx is done, then returns nil.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("cloudsim", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	scenarioPath := fs.String("scenario", "", "scenario file (YAML) to seed the simulated cloud from (required)")
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to serve on; port 0 picks a free port")
	providerFlag := fs.String("provider", "", fmt.Sprintf("simulated cloud, one of %s (default: the scenario's provider field, else %s)",
		strings.Join(providerNames(), ", "), defaultProvider))
	envFile := fs.String("print-env-file", "", "also write the printed KEY=VALUE lines to this file")
	dnsAddr := fs.String("dns", "", "also answer DNS (A, AAAA; udp and tcp) for the names the simulated cloud hands out, on this loopback address (e.g. 127.0.0.53:53); printed as CLOUDSIM_DNS")
	settleAfter := fs.Duration("settle-after", defaultSettleAfter,
		"settle pending resources (provisioning, deleting, actions) this long after they start, read or not, as the real cloud moves on; 0: only when read. A scenario's settleAfter wins")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *scenarioPath == "" {
		return errors.New("--scenario is required")
	}
	if err := checkLoopback(*listen); err != nil {
		return err
	}

	data, err := os.ReadFile(*scenarioPath)
	if err != nil {
		return fmt.Errorf("reading scenario: %w", err)
	}
	provider, err := providerFor(*providerFlag, data)
	if err != nil {
		return fmt.Errorf("%s: %w", *scenarioPath, err)
	}
	newSimulator, ok := simulators[provider]
	if !ok {
		return fmt.Errorf("unknown provider %q, want one of %s", provider, strings.Join(providerNames(), ", "))
	}
	sim, err := newSimulator(data, simkit.SettleAfterByDefault(*settleAfter))
	if err != nil {
		return fmt.Errorf("%s: %w", *scenarioPath, err)
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	defer ln.Close() // after serve, a no-op
	if addr, ok := ln.Addr().(*net.TCPAddr); !ok || !addr.IP.IsLoopback() {
		return fmt.Errorf("--listen=%s resolved to %s, not a loopback address", *listen, ln.Addr())
	}
	url := "http://" + ln.Addr().String()
	if c, ok := sim.(companionServer); ok {
		stopCompanions, err := c.ServeCompanions()
		if err != nil {
			return fmt.Errorf("serving the simulator's other endpoints: %w", err)
		}
		defer stopCompanions()
	}
	extra := map[string]string{}
	var dnsEnded <-chan error
	if *dnsAddr != "" {
		r, ok := sim.(hostResolver)
		if !ok {
			return fmt.Errorf("--dns: the %s simulator hands out no DNS names", provider)
		}
		addr, failed, stopDNS, err := serveDNS(*dnsAddr, r, stderr)
		if err != nil {
			return err
		}
		defer stopDNS()
		extra["CLOUDSIM_DNS"], dnsEnded = addr, failed
	}
	env, err := envLines(url, provider, extra, sim.Env(url))
	if err != nil {
		return err
	}
	if *envFile != "" {
		if err := writeFileAtomic(*envFile, env); err != nil {
			return fmt.Errorf("writing --print-env-file: %w", err)
		}
	}
	if _, err := io.WriteString(stdout, env); err != nil {
		return fmt.Errorf("printing the environment: %w", err)
	}
	fmt.Fprintf(stderr, "%s cloud simulator listening on %s; stats at %s/_sim/stats, state at %s/_sim/state\n", provider, url, url, url)

	return serve(ctx, ln, sim.Handler(), dnsEnded, stderr)
}

// A companionServer is a simulator that advertises endpoints besides its
// API, on listeners of their own (Triton's CMON, on TLS): ServeCompanions
// starts them, so that what Env and the cloud's catalog advertise answers.
type companionServer interface {
	ServeCompanions() (stop func(), err error)
}

// checkLoopback rejects listen addresses other than loopback ones: /_sim
// changes and reveals the cloud without credentials.
func checkLoopback(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen=%s: %w", listen, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
		return fmt.Errorf("--listen=%s: not a loopback address; the simulator's /_sim endpoints need no credentials, so cloudsim listens only on 127.0.0.0/8, ::1 or localhost", listen)
	}
	return nil
}

// providerFor picks the simulator: --provider, else the scenario's
// provider field, else defaultProvider.
func providerFor(flag string, scenario []byte) (string, error) {
	var head struct {
		Provider string `json:"provider"`
	}
	// A scenario that does not parse is the simulator's to report.
	_ = yaml.Unmarshal(scenario, &head)
	switch {
	case flag != "" && head.Provider != "" && flag != head.Provider:
		return "", fmt.Errorf("the scenario is for provider %q, not --provider=%s", head.Provider, flag)
	case flag != "":
		return flag, nil
	case head.Provider != "":
		return head.Provider, nil
	default:
		return defaultProvider, nil
	}
}

// envLines formats what cloudsim prints: CLOUDSIM_URL, CLOUDSIM_PROVIDER,
// cloudsim's other CLOUDSIM_ variables, the provider's variables sorted,
// then an empty line.
func envLines(url, provider string, cloudsim, env map[string]string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "CLOUDSIM_URL=%s\nCLOUDSIM_PROVIDER=%s\n", url, provider)
	for _, k := range slices.Sorted(maps.Keys(cloudsim)) {
		fmt.Fprintf(&b, "%s=%s\n", k, cloudsim[k])
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if strings.ContainsAny(env[k], "\r\n") {
			return "", fmt.Errorf("the simulator's %s has a line break", k)
		}
		fmt.Fprintf(&b, "%s=%s\n", k, env[k])
	}
	b.WriteString("\n")
	return b.String(), nil
}

// writeFileAtomic writes data to a temporary file next to path and renames
// it into place, so that nobody reads path half-written.
func writeFileAtomic(path, data string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// serve serves h on ln until ctx is done, then shuts down gracefully. A
// DNS server ending early (dnsEnded, nil without one) ends it too.
func serve(ctx context.Context, ln net.Listener, h http.Handler, dnsEnded <-chan error, stderr io.Writer) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case err := <-dnsEnded:
		_ = srv.Close()
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Requests held by a long injected delay: cut them off.
		fmt.Fprintf(stderr, "closing requests still in flight after %v\n", shutdownTimeout)
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
