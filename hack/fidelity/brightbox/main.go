// Command brightbox-fidelity drives a Brightbox API (gbsim under
// cmd/cloudsim, for make fidelity) with Brightbox's own Go client,
// gobrightbox, pinned in this module's go.mod, through a read and write
// workflow: the calls the existing Brightbox cloud-controller-manager
// makes, and the rest of what gbsim serves. It logs in with gobrightbox's
// own OAuth2 client-credentials flow over real HTTP, checks every answer
// and exits 1 at the first that is wrong.
//
// Environment (what cmd/cloudsim --print-env-file writes):
//
//	BRIGHTBOX_API_URL, BRIGHTBOX_CLIENT, BRIGHTBOX_CLIENT_SECRET, BRIGHTBOX_ACCOUNT
//	FIDELITY_CLIENTS   more API clients to log in with: "cli-xxxxx:secret ..."
//	CLOUDSIM_DNS       optional: cmd/cloudsim's DNS server (host:port); the
//	                   cloud IP's names are then resolved through it
//
// The scenario must hold at least one active server.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/clientcredentials"
	"github.com/brightbox/gobrightbox/v2/endpoint"
)

// timeout bounds the whole workflow; waits poll within it.
const timeout = 2 * time.Minute

// env is the environment the workflow reads, all of it.
type env struct {
	apiURL, client, secret, account string
	// clients are more API clients: "cli-xxxxx:secret" each.
	clients []string
	// dns is cmd/cloudsim's DNS server; "" without one.
	dns string
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	getenv := os.Getenv //nolint:forbidigo // a command reads its environment in main: cmd/cloudsim's variables
	r := &run{ctx: ctx, env: env{
		apiURL: getenv("BRIGHTBOX_API_URL"), client: getenv("BRIGHTBOX_CLIENT"),
		secret: getenv("BRIGHTBOX_CLIENT_SECRET"), account: getenv("BRIGHTBOX_ACCOUNT"),
		clients: strings.Fields(getenv("FIDELITY_CLIENTS")), dns: getenv("CLOUDSIM_DNS"),
	}}
	if err := r.all(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("brightbox fidelity: %d checks passed\n", r.checks)
}

// run is one pass of the workflow.
type run struct {
	ctx    context.Context
	env    env
	c      *brightbox.Client
	checks int
	// node is the active server the workflow builds on.
	node *brightbox.Server
}

func (r *run) all() error {
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"log in", r.login},
		{"more API clients", r.moreClients},
		{"read the account", r.reads},
		{"server groups and firewall", r.firewall},
		{"cloud IPs", r.cloudIPs},
		{"load balancers", r.loadBalancers},
		{"errors", r.apiErrors},
	} {
		if err := step.do(); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		fmt.Printf("ok   %s\n", step.name)
	}
	return nil
}

// connect logs in as API client id with gobrightbox's own OAuth2 flow.
func (r *run) connect(id, secret string) (*brightbox.Client, error) {
	conf := &clientcredentials.Config{
		ID: id, Secret: secret,
		Config: endpoint.Config{
			BaseURL: r.env.apiURL, Account: r.env.account,
			Scopes: endpoint.InfrastructureScope,
		},
	}
	return brightbox.Connect(r.ctx, conf)
}

func (r *run) login() error {
	for v, val := range map[string]string{"BRIGHTBOX_API_URL": r.env.apiURL, "BRIGHTBOX_CLIENT": r.env.client,
		"BRIGHTBOX_CLIENT_SECRET": r.env.secret, "BRIGHTBOX_ACCOUNT": r.env.account} {
		if val == "" {
			return fmt.Errorf("%s is not set", v)
		}
	}
	c, err := r.connect(r.env.client, r.env.secret)
	if err != nil {
		return err
	}
	r.c = c
	_, err = c.Accounts(r.ctx)
	return err
}

// moreClients logs in with every other API client the scenario
// registers: each reaches the same account.
func (r *run) moreClients() error {
	for _, cred := range r.env.clients {
		id, secret, _ := strings.Cut(cred, ":")
		c, err := r.connect(id, secret)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		accounts, err := c.Accounts(r.ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		if err := r.expect(len(accounts) == 1 && accounts[0].ID == r.env.account,
			"client %s sees accounts %+v, want only %s", id, accounts, r.env.account); err != nil {
			return err
		}
	}
	c, err := r.connect(r.env.client, "not-the-secret")
	if err == nil {
		_, err = c.Accounts(r.ctx)
	}
	return r.expect(err != nil, "a wrong secret logged in")
}
