package e2e

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// testNoCredentialInLogAtV10 runs the provider's real CCM binary at
// -v=10, where client-go logs every Kubernetes API request and response
// body and the cloudapi transport every cloud API call, and scrapes its
// /metrics with a ServiceAccount token. The delegated authentication sends
// that token to the API server in a TokenReview (whose answer echoes it);
// neither that caller's token nor the CCM's own cloud credentials may reach
// the log.
func testNoCredentialInLogAtV10(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	port := freePort(t)
	ccm, err := c.StartCCM("ccm-v10", "-v=10", "--secure-port="+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	addNodes(t, c, "node", 1) // the CCM's own cloud and kube calls, logged at -v=10
	token := testCCMMetrics(t, c.Kube, port)

	log := ccm.Log()
	if !tokenReviewBody.MatchString(log) {
		t.Fatal("the log has no TokenReview body: client-go's body logging at -v=10 did not run, so this test shows nothing")
	}
	secrets := map[string]string{"the /metrics caller's bearer token": token}
	for name, v := range cloudCredentials(c.Sim) {
		secrets[name] = v
	}
	for what, secret := range secrets {
		if strings.Contains(log, secret) {
			t.Errorf("the CCM log at -v=10 holds %s", what)
		}
	}
}

// tokenReviewBody matches a logged TokenReview body, quoted (one line) or
// not (several).
var tokenReviewBody = regexp.MustCompile(`\\?"kind\\?":\\?"TokenReview\\?"`)

// cloudCredentials returns the credentials the CCM is given: environment
// variables and --cloud-config keys whose names say they are secret.
func cloudCredentials(sim cluster.Sim) map[string]string {
	secret := func(name string) bool {
		name = strings.ToLower(name)
		return strings.Contains(name, "token") || strings.Contains(name, "password") || strings.Contains(name, "secret") ||
			strings.Contains(name, "key_material") // Triton's private key
	}
	out := map[string]string{}
	for k, v := range sim.Env() {
		if !secret(k) || v == "" {
			continue
		}
		out["$"+k] = v
		// A PEM key would be logged with its newlines escaped: look for
		// each line of its body.
		for i, line := range strings.Split(v, "\n") {
			if len(line) >= 40 && !strings.HasPrefix(line, "-----") {
				out[fmt.Sprintf("$%s line %d", k, i+1)] = line
			}
		}
	}
	sc := bufio.NewScanner(strings.NewReader(sim.CloudConfig()))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`); ok && secret(k) && v != "" {
			out["cloud config "+k] = v
		}
	}
	return out
}
