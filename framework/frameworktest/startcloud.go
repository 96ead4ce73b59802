package frameworktest

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
)

// StartCloud starts target's provider as framework.Main does at start-up
// (framework.NewCloud with target's settings and cloud config, a fake API
// server and event recorder, one attempt per request, the instance cache
// off), after tune's changes to its Env, and fails t on an error. It
// returns the cloud and a context that logs to t.
func StartCloud(t *testing.T, target *Target, tune ...func(*framework.Env)) (*framework.Cloud, context.Context) {
	t.Helper()
	env := newEnv(t, target, fake.NewClientset(), record.NewFakeRecorder(100), variant{})
	for _, fn := range tune {
		fn(env)
	}
	_, ctx := ktesting.NewTestContext(t)
	cloud, err := framework.NewCloud(ctx, target.Provider, env)
	if err != nil {
		t.Fatalf("framework.NewCloud: %v", err)
	}
	return cloud, ctx
}
