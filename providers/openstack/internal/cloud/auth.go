package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"k8s.io/utils/clock"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// keystoneAuth requests the provider client's Keystone tokens: the first
// one at Init, then a new one each time an API refuses the current one
// (reauth, gophercloud's ReauthFunc, called on a 401: the token expired,
// or was revoked, as Keystone revokes a user's tokens when its password
// changes and an application credential's when it is deleted).
//
// Each new token is requested with the [Global] credentials the
// --cloud-config file holds at that moment (conf, which re-reads the file
// only when it changed): a rotated cloud-config Secret, which the kubelet
// writes over the mounted cloud.conf, takes effect at the next token,
// without a restart. A file that changed credentials gets its token at
// once, even while re-authentication backs off; a token for another
// project than the first one is refused. Everything lives in this value,
// one per initialized provider: nothing is process-wide.
type keystoneAuth struct {
	pc *gophercloud.ProviderClient
	// blank is pc before its first token, as a throwaway client: each new
	// token is requested on a copy of it, and only a token Keystone
	// issued (for the right project) replaces pc's.
	blank gophercloud.ProviderClient
	guard *reauthGuard
	conf  *ConfWatch // nil: no --cloud-config file to follow

	// mu serializes reauth (gophercloud does too) and guards global.
	mu sync.Mutex
	// global holds the settings tokens are requested with: the ones Init
	// read, with the credentials of the file as last read.
	global GlobalSection
	// project is the ID of the project the first token is scoped to
	// ("" if Keystone did not say).
	project string
}

// Authenticate builds the provider client over hc and requests its first
// token with g, then makes it request every later one with keystoneAuth
// (conf may be nil). A rejected credential yields an error naming the
// settings to check and no response body; nothing returned contains a
// secret. clk is the re-authentication backoff's clock (nil: the real
// one).
func Authenticate(ctx context.Context, g *GlobalSection, hc *http.Client, clk clock.Clock, conf *ConfWatch) (*gophercloud.ProviderClient, error) {
	ao, err := authOptions(g)
	if err != nil {
		return nil, err
	}
	pc, err := openstack.NewClient(g.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("[Global] auth-url: %w", err)
	}
	a := &keystoneAuth{pc: pc, guard: newReauthGuard(clk), conf: conf, global: *g}
	pc.HTTPClient = *hc
	pc.HTTPClient.Transport = a.guard.watch(hc.Transport)
	a.blank = *pc
	a.blank.SetThrowaway(true)
	if err := openstack.Authenticate(cloudapi.WithOperation(ctx, "keystone.tokens.create"), pc, ao); err != nil {
		return nil, authError(g, err)
	}
	a.project = tokenProject(pc)
	pc.ReauthFunc = a.reauth
	return pc, nil
}

// reauth is the provider client's ReauthFunc: it requests a new token with
// the credentials of the --cloud-config file as it is now, behind the
// backoff unless the file changed the credentials. gophercloud calls it
// on a 401, one call at a time, and sends the refused request once more
// with the new token.
func (a *keystoneAuth) reauth(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	changed := a.conf != nil && a.conf.reload(ctx, &a.global)
	if !changed {
		if err := a.guard.attempt(ctx); err != nil {
			return a.withConfError(err)
		}
	}
	ao, err := authOptions(&a.global)
	if err != nil {
		return a.withConfError(err)
	}
	tac := a.blank
	if err := openstack.Authenticate(cloudapi.WithOperation(ctx, "keystone.tokens.create"), &tac, ao); err != nil {
		return a.withConfError(authError(&a.global, err))
	}
	if p := tokenProject(&tac); a.project != "" && p != a.project {
		return a.withConfError(fmt.Errorf("the token Keystone at %s issued is for project %q, not %q as at start-up: "+
			"%s belong to another project, and changing the project takes a restart",
			RedactedURL(a.global.AuthURL), p, a.project, a.global.credentialKeys()))
	}
	a.pc.CopyTokenFrom(&tac)
	return nil
}

// withConfError adds to err, a failed re-authentication, why the
// --cloud-config file's current content is not used, if it is not.
func (a *keystoneAuth) withConfError(err error) error {
	if a.conf == nil || a.conf.err == nil {
		return err
	}
	return fmt.Errorf("%w; and %w", err, a.conf.err)
}

// authError describes err, a failed token request with g's credentials,
// without a response body: Keystone's error quotes nothing secret, but a
// proxy's page might.
func authError(g *GlobalSection, err error) error {
	var code gophercloud.ErrUnexpectedResponseCode
	switch {
	case errors.As(err, &code) && (code.Actual == http.StatusUnauthorized || code.Actual == http.StatusForbidden):
		return fmt.Errorf("authentication failed: Keystone at %s answered %d %s; check %s",
			RedactedURL(g.AuthURL), code.Actual, http.StatusText(code.Actual), g.credentialKeys())
	case errors.As(err, &code):
		return fmt.Errorf("cannot authenticate with Keystone at %s ([Global] auth-url): %s %s answered %d %s",
			RedactedURL(g.AuthURL), code.Method, RedactedURL(code.URL), code.Actual, http.StatusText(code.Actual))
	}
	return fmt.Errorf("cannot authenticate with Keystone at %s ([Global] auth-url): %w", RedactedURL(g.AuthURL), err)
}

// tokenProject is the ID of the project pc's token is scoped to, "" if
// unknown.
func tokenProject(pc *gophercloud.ProviderClient) string {
	r, ok := pc.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return ""
	}
	p, err := r.ExtractProject()
	if err != nil || p == nil {
		return ""
	}
	return p.ID
}
