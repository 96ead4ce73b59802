package framework

import "fmt"

// PickByName decides, once for every provider, what a complete list of
// the cloud's VMs proves about the one a Node named name runs on. found
// holds the list's live VMs that match the name; malformed counts the
// entries the provider could not read (no ID, no name: any of them may be
// the Node's VM under a name the answer lost). kind names a VM in the
// cloud's words ("droplet", "host"); id gives a VM's ID for the message.
//
//   - exactly one match: that VM;
//   - none, while the list held malformed entries: an error, since the
//     VM may be among them ("gone" only when the cloud said so);
//   - none: an authoritative NotFound;
//   - several: an error naming two of them, for the operator to settle
//     (give the Node its providerID, or rename a VM): never a guess.
func PickByName[T any](kind, name string, found []T, malformed int, id func(T) string) (T, error) {
	var zero T
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return zero, fmt.Errorf("%ss %s and %s both match node %q: give the Node its providerID, or rename one",
			kind, id(found[0]), id(found[1]), name)
	case malformed > 0:
		return zero, fmt.Errorf("no %s named %q, but the list held %d malformed %s(s)", kind, name, malformed, kind)
	}
	return zero, NotFound("no %s named %q", kind, name)
}
