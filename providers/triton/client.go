package triton

import (
	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
)

// api is the CloudAPI clients and what Init learned about the account and
// datacenter. (Stub: the provider helper writes it.)
type api struct {
	compute *compute.ComputeClient
	network *network.NetworkClient
	account *account.AccountClient
	// accountID is the account's UUID (CNS names use it), login its name.
	accountID, login string
	// cnsEnabled is the account's triton_cns_enabled.
	cnsEnabled bool
	// datacenter is the datacenter's name (the zone).
	datacenter string
}
