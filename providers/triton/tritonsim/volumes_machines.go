package tritonsim

import (
	"net/http"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// codeVolumesNotReachable is VMAPI's code for a machine none of whose
// networks reaches a volume it mounts. CloudAPI wraps it in its
// VolumesNotReachableError, which sets its code and status on the
// constructor rather than the prototype; the simulator answers VMAPI's
// code and 409, as VMAPI does.
const codeVolumesNotReachable = "VolumesNotReachable"

// requestedVolumes reads CreateMachine's "volumes" (triton-go's
// compute.InstanceVolume: name, type, mode, mountpoint) as CloudAPI
// validates them (lib/machines.js validateVolume), and checks, as VMAPI
// does, that each ready volume named is on one of the machine's networks.
// It returns the volumes' names.
func (st *state) requestedVolumes(req createRequest, m *Machine) ([]string, *simkit.Response) {
	bad := func(resp simkit.Response) ([]string, *simkit.Response) { return nil, &resp }
	raw, set := req["volumes"]
	if !set || raw == nil {
		return nil, nil
	}
	list, isList := raw.([]any)
	if !isList {
		return bad(invalid("volumes must be an array of objects"))
	}
	if len(list) == 0 {
		return nil, nil
	}
	if st.opts.NoVolumes {
		return bad(invalid("Support for automounting volumes is not enabled"))
	}
	var errs, names []string
	for _, item := range list {
		vol, isObject := item.(map[string]any)
		if !isObject {
			return bad(invalid("volumes must be an array of objects"))
		}
		errs = append(errs, validateMachineVolume(vol)...)
		name, _ := vol["name"].(string)
		names = append(names, name)
	}
	if len(errs) > 0 {
		return bad(invalid("%s", strings.Join(errs, ", ")))
	}
	networks := st.machineNetworks(m)
	var unreachable []string
	for _, name := range names {
		v, found := st.vols.volumes.Find(func(v *Volume) bool { return v.Name == name && v.State == VolumeReady })
		if found && !slices.ContainsFunc(v.Networks, func(n string) bool { return slices.Contains(networks, n) }) {
			unreachable = append(unreachable, "Volume "+name+" not reachable on networks "+strings.Join(networks, ", "))
		}
	}
	if len(unreachable) > 0 {
		return bad(failCode(http.StatusConflict, codeVolumesNotReachable,
			"Volumes not reachable from machine: %s", strings.Join(unreachable, ", ")))
	}
	return names, nil
}

// validateMachineVolume is CloudAPI's check of one of CreateMachine's
// volumes: the messages of its errors.
func validateMachineVolume(vol map[string]any) []string {
	var errs []string
	name := jsString(vol["name"], true)
	if t, set := vol["type"]; set && t != VolumeTypeNFS {
		errs = append(errs, `unknown volume type "`+jsString(t, true)+`"`)
	}
	if mode, set := vol["mode"]; set && mode != "ro" && mode != "rw" {
		errs = append(errs, "volume mode for volume "+name+" must be one of ro, rw")
	}
	errs = append(errs, validateVolumeName(vol["name"])...)
	mp, _ := vol["mountpoint"].(string)
	if !strings.HasPrefix(mp, "/") || strings.Contains(mp, "\x00") || strings.Trim(mp, "/") == "" {
		errs = append(errs, "invalid mount point for volume "+name)
	}
	return errs
}

// machineNetworks are the IDs of the networks m will have NICs on: those
// it asks for, else the default ones.
func (st *state) machineNetworks(m *Machine) []string {
	var out []string
	if len(m.NICs) == 0 {
		for _, n := range st.defaultNetworks() {
			out = append(out, n.ID)
		}
		return out
	}
	for _, nic := range m.NICs {
		if n, found := st.network(nic.Network); found {
			out = append(out, n.ID)
		}
	}
	return out
}

// mountVolumes makes machine m a ref of each volume named, as VMAPI's
// provisioning workflow does (lib/workflows/nfs-volumes): a creating or
// ready volume of that name is used, and a volume that does not exist is
// created, on the machine's fabric networks (the default fabric network
// when it has none), of the default size. The machine fails if one cannot
// be created.
func (st *state) mountVolumes(m *Machine, names []string) {
	for _, name := range names {
		v, found := st.vols.volumes.Find(func(v *Volume) bool {
			return v.Name == name && (v.State == VolumeCreating || v.State == VolumeReady)
		})
		if !found {
			var fabrics []string
			for _, nic := range m.NICs {
				if n, ok := st.networks.Get(nic.Network); ok && n.Fabric && !slices.Contains(fabrics, n.ID) {
					fabrics = append(fabrics, n.ID)
				}
			}
			var err error
			v, err = st.addVolume(Volume{Name: name, State: VolumeCreating, Networks: fabrics, Size: st.volumeSizes()[0]})
			if err != nil {
				st.settling.Stop(m.ID)
				m.State = StateFailed
				return
			}
		}
		if !slices.Contains(v.Refs, m.ID) {
			v.Refs = append(v.Refs, m.ID)
		}
	}
}
