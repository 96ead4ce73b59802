package csi

import (
	"context"
	"path"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/protosanitizer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// Logging verbosity of a CSI call (the same levels as the cloud API's
// request log in framework/cloudapi): a failed call at V(2), every call
// (method, code, duration) at V(4), the request and response at V(5),
// always through protosanitizer, so that the secrets fields (StorageClass
// and snapshot class secrets, node stage/publish secrets) never reach
// the log at any -v.
const (
	vFailed = 2
	vCall   = 4
	vBody   = 5
)

// interceptor logs and records every call, and puts a logger naming the
// method in the call's context (klog.FromContext in a provider).
func (d *driver) interceptor(logger klog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		method := path.Base(info.FullMethod)
		l := logger.WithValues("method", method)
		if id, ok := req.(interface{ GetVolumeId() string }); ok && id.GetVolumeId() != "" {
			l = l.WithValues("volumeID", id.GetVolumeId())
		}
		if l.V(vBody).Enabled() {
			l.V(vBody).Info("CSI request", "request", protosanitizer.StripSecrets(req))
		}
		start := time.Now()
		resp, err := handler(klog.NewContext(ctx, l), req)
		took := time.Since(start)
		code := status.Code(err)
		d.recorder.observe(method, code, took)
		switch {
		case err != nil:
			l.V(vFailed).Info("CSI call failed", "code", code.String(), "err", status.Convert(err).Message(), "duration", took)
		case l.V(vBody).Enabled():
			l.V(vBody).Info("CSI response", "code", codes.OK.String(), "duration", took, "response", protosanitizer.StripSecrets(resp))
		default:
			l.V(vCall).Info("CSI call", "code", codes.OK.String(), "duration", took)
		}
		return resp, err
	}
}
