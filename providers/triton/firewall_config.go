package triton

// FirewallSettings are the firewall controller's settings, part of Config.
// (Stub: the firewall helper writes it.)
type FirewallSettings struct{}
