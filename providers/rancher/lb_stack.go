package rancher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// The load-balancer stack and the HAProxy image are looked up once and
// remembered: the stack by its name, its externalId checked here
// (created at the first load balancer when missing), and the
// image from the lb.instance.image setting at the first create. A stack
// removed behind the CCM's back is forgotten when Cattle refuses a create
// in it (Create looks it up, or makes it, again).

// lbEnv is what the load balancers share in the environment: the stack's
// ID and the default image, each read once.
type lbEnv struct {
	api      *cloud.API
	settings LoadBalancerSettings

	mu      sync.Mutex
	stackID string
	image   string
}

// stack returns the load-balancer stack's ID, creating the stack when it
// is missing and create is set. Without it, a missing stack is "" and no
// error: there are no load balancers yet.
func (e *lbEnv) stack(ctx context.Context, create bool) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stackID != "" {
		return e.stackID, nil
	}
	name, externalID := e.settings.stackName(), e.settings.stackExternalID()
	// By name only. The existing CCM also sent external_id, which Cattle
	// splits at its last underscore into the field "external" and the
	// modifier "id", and ignores: its lookup matched by name too. The
	// externalId is checked below, so that a stack of the same name that
	// is not the load balancers' is a clear error, not a create Cattle
	// refuses (NotUnique).
	stacks, err := cloud.ListAll[rancher.Stack](ctx, e.api, "stacks.list", rancher.STACK_TYPE, map[string]any{
		"name": name, "removed_null": "1",
	}, 0)
	if err != nil {
		return "", fmt.Errorf("looking up stack %s: %w", name, err)
	}
	for _, s := range stacks {
		if s.Name != name {
			continue
		}
		gone, err := cloud.Removed("stack", s.Id, s.State, s.Removed)
		if err != nil {
			return "", fmt.Errorf("looking up stack %s: %w", name, err)
		}
		if gone {
			continue
		}
		if s.ExternalId != externalID {
			return "", fmt.Errorf("stack %s (%s) has externalId %q, not %q: it is not the load balancers'; set RANCHER_LB_STACK to another name", name, s.Id, s.ExternalId, externalID)
		}
		if s.Id == "" {
			return "", fmt.Errorf("looking up stack %s: malformed response: a stack without id", name)
		}
		if s.State == cloud.StateRemoving {
			// Removed by hand: Cattle refuses new services in it, and
			// its name to a new stack, until it is gone. Not remembered.
			if create {
				return "", framework.Provisioning("stack %s (%s) is being removed: a new one is made once it is gone", name, s.Id)
			}
			return s.Id, nil
		}
		e.stackID = s.Id
		return s.Id, nil
	}
	if !create {
		return "", nil
	}
	s, err := cloud.CreateResource[rancher.Stack](ctx, e.api, "stacks.create", rancher.STACK_TYPE, &rancher.Stack{Name: name, ExternalId: externalID, StartOnCreate: true})
	if err != nil {
		return "", fmt.Errorf("creating stack %s: %w", name, err)
	}
	e.stackID = s.Id
	return s.Id, nil
}

// forgetStack drops the remembered stack ID: Cattle refused it (a 422 to
// a create in it), so the next stack looks it up again.
func (e *lbEnv) forgetStack(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stackID == id {
		e.stackID = ""
	}
}

// defaultImage is the imageUuid of new load balancers whose Service names
// no image: RANCHER_LB_IMAGE, else the lb.instance.image setting.
func (e *lbEnv) defaultImage(ctx context.Context) (string, error) {
	if e.settings.Image != "" {
		return "docker:" + e.settings.Image, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.image != "" {
		return e.image, nil
	}
	settings, err := cloud.ListAll[rancher.Setting](ctx, e.api, "settings.list", rancher.SETTING_TYPE, map[string]any{"name": imageSetting}, 0)
	if err != nil {
		return "", fmt.Errorf("reading setting %s: %w", imageSetting, err)
	}
	for _, s := range settings {
		if s.Name != imageSetting {
			continue
		}
		v := strings.TrimSpace(s.Value)
		if v == "" {
			v = strings.TrimSpace(s.ActiveValue)
		}
		if v == "" {
			break
		}
		e.image = "docker:" + strings.TrimPrefix(v, "docker:")
		return e.image, nil
	}
	return "", errors.New("setting " + imageSetting + " is empty or missing: set RANCHER_LB_IMAGE")
}
