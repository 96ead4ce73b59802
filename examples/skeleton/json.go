// This file holds what the decoding of the Skeleton Cloud API's objects
// checks beyond their types: keys the API always sends, and values an
// answer must hold for its status.

package skeleton

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// instanceKeys are the keys the Skeleton Cloud API sends for every
// instance: an address the instance lacks is an empty string, never a
// missing key or null. An answer without one of them is malformed, not an instance
// without a type or an address: taken as such, it would take the Node's
// label or address away.
var instanceKeys = []string{"id", "name", "type", "region", "zone", "status", "private_ipv4", "public_ipv4", "public_ipv6"}

// UnmarshalJSON decodes an instance and records the keys it lacks, which
// convert turns into an error for that instance alone: one malformed
// instance in a list does not fail the others.
func (in *instance) UnmarshalJSON(b []byte) error {
	type fields instance // without this method
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	*in = instance{}
	if err := json.Unmarshal(b, (*fields)(in)); err != nil {
		return err
	}
	for _, k := range instanceKeys {
		if v, ok := keys[k]; !ok || string(v) == "null" {
			in.missing = append(in.missing, k)
		}
	}
	return nil
}

// isInstanceID reports whether id has the shape of a Skeleton Cloud
// instance ID: "i-" and lower-case letters or digits.
func isInstanceID(id string) bool { return isID("i-", id) }

// isID reports whether id has the shape of a Skeleton Cloud ID with
// prefix: the prefix and lower-case letters or digits ("i-", "r-").
func isID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	return ok && rest != "" && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz0123456789") == ""
}

// check reports a route the API would never answer: an ID, destination or
// target instance not of the API's shape. Taken as it is, a route would
// read as a blackhole (which the route controller deletes) or as a route
// to another destination.
func (rt *route) check() error {
	if _, err := netip.ParsePrefix(rt.DestinationCIDR); err != nil || !isID("r-", rt.ID) || !isInstanceID(rt.TargetInstanceID) {
		return fmt.Errorf("malformed response: route %q to %q via instance %q", rt.ID, rt.DestinationCIDR, rt.TargetInstanceID)
	}
	return nil
}

// check reports an instance that lacks a key, or whose ID has not the
// API's shape: taken as it is, a Node would lose a label or an address,
// or get another instance's providerID, and a route to it would read as a
// blackhole.
func (in *instance) check() error {
	switch {
	case len(in.missing) > 0:
		return fmt.Errorf("malformed response: instance %s without %s", in.ID, strings.Join(in.missing, ", "))
	case !isInstanceID(in.ID):
		return fmt.Errorf("malformed response: instance ID %q", in.ID)
	case in.Type == "":
		// Every instance has a type; an empty one would take the
		// Node's instance-type label away.
		return fmt.Errorf("malformed response: instance %s without a type", in.ID)
	}
	return nil
}

// UnmarshalJSON decodes a load balancer. An active one always has its IPv4
// address in the Skeleton Cloud API: an answer without it is malformed,
// not a load balancer without an address, which would empty the Service's
// status; so is an address that is no IPv4 address, which would be
// written there.
func (lb *loadBalancer) UnmarshalJSON(b []byte) error {
	type fields loadBalancer // without this method
	*lb = loadBalancer{}
	if err := json.Unmarshal(b, (*fields)(lb)); err != nil {
		return err
	}
	if lb.Status == lbActive && lb.IPv4 == "" {
		return fmt.Errorf("malformed response: load balancer %s is active without an IPv4 address", lb.ID)
	}
	if a, err := netip.ParseAddr(lb.IPv4); lb.IPv4 != "" && (err != nil || !a.Is4()) {
		return fmt.Errorf("malformed response: load balancer %s has IPv4 address %q", lb.ID, lb.IPv4)
	}
	if slices.Contains(lb.Tags, "") {
		// The API refuses an empty tag: kept, it would fail every
		// update that sends the tags back.
		return fmt.Errorf("malformed response: load balancer %s has an empty tag", lb.ID)
	}
	return nil
}
