package csi

import (
	"context"
	"net"
	"net/http"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"k8s.io/component-base/metrics/legacyregistry"
)

type identity struct {
	csipb.UnimplementedIdentityServer
	d *driver
}

func (s *identity) GetPluginInfo(context.Context, *csipb.GetPluginInfoRequest) (*csipb.GetPluginInfoResponse, error) {
	return &csipb.GetPluginInfoResponse{Name: s.d.name, VendorVersion: s.d.opts.Version}, nil
}

func (s *identity) GetPluginCapabilities(context.Context, *csipb.GetPluginCapabilitiesRequest) (*csipb.GetPluginCapabilitiesResponse, error) {
	service := func(t csipb.PluginCapability_Service_Type) *csipb.PluginCapability {
		return &csipb.PluginCapability{Type: &csipb.PluginCapability_Service_{Service: &csipb.PluginCapability_Service{Type: t}}}
	}
	var caps []*csipb.PluginCapability
	if s.d.opts.Mode.controller() {
		caps = append(caps, service(csipb.PluginCapability_Service_CONTROLLER_SERVICE))
	}
	if s.d.key != "" {
		caps = append(caps, service(csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS))
	}
	if _, ok := s.d.expander(); ok {
		caps = append(caps, &csipb.PluginCapability{Type: &csipb.PluginCapability_VolumeExpansion_{
			VolumeExpansion: &csipb.PluginCapability_VolumeExpansion{Type: csipb.PluginCapability_VolumeExpansion_ONLINE}}})
	}
	return &csipb.GetPluginCapabilitiesResponse{Capabilities: caps}, nil
}

func (s *identity) Probe(ctx context.Context, _ *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	if err := s.d.probe(ctx); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "not ready: %v", err)
	}
	return &csipb.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

func (d *driver) probe(ctx context.Context) error {
	if p, ok := d.opts.Provider.(Prober); ok {
		return p.Probe(ctx)
	}
	return nil
}

// httpServer serves /metrics and /healthz (the provider's Prober, if
// any: the driver's own liveness probe, as no livenessprobe sidecar is
// needed).
func (d *driver) httpServer(ctx context.Context, addr string) *http.Server {
	mux := http.NewServeMux()
	if d.opts.Registry != nil {
		mux.Handle("/metrics", metricsHandler(d.opts.Registry))
	} else {
		mux.Handle("/metrics", legacyregistry.Handler())
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		pctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		if err := d.probe(pctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}
