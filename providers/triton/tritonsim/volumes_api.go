package tritonsim

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Error codes of the volume endpoints: VOLAPI's, which CloudAPI passes on
// (sdc-volapi lib/errors.js, sdc-cloudapi lib/errors.js volapiErrorWrap),
// and CloudAPI's own for an account without a default network.
const (
	codeVolumeNotFound      = "VolumeNotFound"
	codeVolumeInUse         = "VolumeInUse"
	codeVolumeExists        = "VolumeAlreadyExists"
	codeVolumeSize          = "VolumeSizeNotAvailable"
	codeVolumeValidation    = "ValidationError"
	codeNoDefaultFabric     = "DefaultFabricNetworkNotConfiguredError"
	maxVolumeNameLength     = 256
	volumeNamePatternText   = `/^[a-z0-9][\w.-]+$/i`
	volumeIDPatternText     = `/^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$/`
	volumeSizeFilterPattern = `/^[1-9][0-9]*$/`
)

// CloudAPI's patterns (lib/validation/volumes.js); JavaScript's \w is
// ASCII, as Go's is.
var (
	volumeNamePattern       = regexp.MustCompile(`(?i)^[a-z0-9][\w.-]+$`)
	volumeNameFilterPattern = regexp.MustCompile(`(?i)^\*?[\w.-]+\*?$`)
	volumeIDPattern         = regexp.MustCompile(`^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$`)
	volumeSizeFilter        = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// volumeRoutes serves CloudAPI's volume endpoints (lib/endpoints/
// volumes.js), unless the datacenter has no NFS volumes
// (Options.NoVolumes): CloudAPI then mounts none, and they are 404
// ResourceNotFound as any unknown path.
func (s *Server) volumeRoutes() {
	if s.opts.NoVolumes {
		return
	}
	s.Handle("GET /{account}/volumesizes", s.listVolumeSizes)
	s.Handle("GET /{account}/volumes", s.listVolumes)
	s.Handle("POST /{account}/volumes", s.createVolume)
	s.Handle("GET /{account}/volumes/{id}", s.getVolume)
	s.Handle("POST /{account}/volumes/{id}", s.updateVolume)
	s.Handle("DELETE /{account}/volumes/{id}", s.deleteVolume)
}

// volumeJSON is a volume as CloudAPI serves it (translateVolumeFromVolApi
// over VOLAPI's formatVolumeValue): uuid as id, labels as tags (absent
// when none), create_timestamp as created (JavaScript's toISOString),
// refs absent when none (VOLAPI deletes the empty list), filesystem_path
// absent until the storage VM has set it, vm_uuid hidden.
type volumeJSON struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Owner          string            `json:"owner_uuid"`
	Type           string            `json:"type"`
	Size           int64             `json:"size"`
	State          string            `json:"state"`
	Networks       []string          `json:"networks"`
	Refs           []string          `json:"refs,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	FilesystemPath string            `json:"filesystem_path,omitempty"`
	Created        string            `json:"created"`
}

func (v *Volume) json() volumeJSON {
	c := v.clone()
	return volumeJSON{
		ID: c.ID, Name: c.Name, Owner: c.Owner, Type: c.Type, Size: c.Size, State: c.State,
		Networks: c.Networks, Refs: c.Refs, Tags: c.Tags, FilesystemPath: c.FilesystemPath,
		Created: c.Created.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
}

// invalidParams is CloudAPI's answer to input its validation refuses:
// 409 InvalidArgument whose message is the errors joined as JavaScript
// joins Error objects ("Error: <message>, Error: <message>").
func invalidParams(msgs []string) simkit.Response {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = "Error: " + m
	}
	return invalid("%s", strings.Join(parts, ", "))
}

// volapiError is an error of VOLAPI's as CloudAPI passes it on
// (ExposedSDCError): VOLAPI's status and code, its message after
// CloudAPI's "Error when <doing> volume: ".
func volapiError(status int, code, doing, format string, args ...any) simkit.Response {
	return failCode(status, code, "Error when "+doing+" volume: "+format, args...)
}

func volumeNotFound(doing, id string) simkit.Response {
	return volapiError(http.StatusNotFound, codeVolumeNotFound, doing, "Volume with uuid %s could not be found", id)
}

// jsString is v as JavaScript's string concatenation renders a JSON value
// ("undefined" when it is absent).
func jsString(v any, present bool) string {
	if !present {
		return "undefined"
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		parts := make([]string, len(x))
		for i, item := range x {
			if item != nil {
				parts[i] = jsString(item, true)
			}
		}
		return strings.Join(parts, ",")
	default:
		return "[object Object]"
	}
}

// validateVolumeName is CloudAPI's check of a volume's name.
func validateVolumeName(v any) []string {
	var errs []string
	name, isString := v.(string)
	if !isString {
		errs = append(errs, "Invalid volume name: volume name must be a string")
	}
	if s := jsString(v, true); !volumeNamePattern.MatchString(s) {
		errs = append(errs, "Invalid volume name: "+s+". Volume name should match "+volumeNamePatternText)
	}
	if len(name) > maxVolumeNameLength {
		errs = append(errs, "Invalid volume name length: volume name must be at most "+strconv.Itoa(maxVolumeNameLength)+" long")
	}
	return errs
}

func validateVolumeType(v any, present bool) []string {
	if t, _ := v.(string); t == VolumeTypeNFS {
		return nil
	}
	return []string{"Invalid volume type: " + jsString(v, present) + ". Volume type should be one of: " + VolumeTypeNFS}
}

// validVolumeID answers CloudAPI's 409 for an ID that is no UUID, nil for
// a UUID.
func validVolumeID(id string) *simkit.Response {
	if volumeIDPattern.MatchString(id) {
		return nil
	}
	resp := invalidParams([]string{"Invalid volume ID: " + id + ". Volume ID should match " + volumeIDPatternText})
	return &resp
}

// listVolumeSizes serves ListVolumeSizes: the sizes of the volumes one can
// create, ascending, each {size, type}.
func (s *Server) listVolumeSizes(r *http.Request) simkit.Response {
	if t, set := r.URL.Query()["type"]; set {
		if errs := validateVolumeType(t[0], true); errs != nil {
			return invalidParams(errs)
		}
	}
	type size struct {
		Size int64  `json:"size"`
		Type string `json:"type"`
	}
	out := []size{}
	for _, n := range s.st.volumeSizes() {
		out = append(out, size{n, VolumeTypeNFS})
	}
	resp := ok(out)
	resp.Header = http.Header{"X-Resource-Count": {strconv.Itoa(len(out))}}
	return resp
}

// listVolumes serves ListVolumes: the account's volumes that match every
// filter given (name, exact or with a leading and/or trailing *; size;
// state; type), failed ones only when state is given, as CloudAPI lists
// them; X-Resource-Count. Each volume listed counts as a read of it.
func (s *Server) listVolumes(r *http.Request) simkit.Response {
	q := r.URL.Query()
	if fail := validateVolumeFilters(q); fail != nil {
		return *fail
	}
	out := []volumeJSON{}
	for _, v := range s.st.vols.volumes.All() {
		if !volumeMatches(v, q) {
			continue
		}
		id := v.ID
		s.st.vols.settling.Read(id)
		if v, found := s.st.vols.volumes.Get(id); found && volumeMatches(v, q) {
			out = append(out, v.json())
		}
	}
	resp := ok(out)
	resp.Header = http.Header{"X-Resource-Count": {strconv.Itoa(len(out))}}
	return resp
}

// validateVolumeFilters is CloudAPI's validateListVolumesInput. The
// predicate parameter (a JSON LDAP-like filter) is not simulated: it is
// refused rather than ignored, so that no client takes an unfiltered list
// for a filtered one.
func validateVolumeFilters(q map[string][]string) *simkit.Response {
	var errs []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains([]string{"name", "predicate", "size", "state", "type"}, k) {
			errs = append(errs, "invalid parameter: "+k)
		}
	}
	if v, set := q["name"]; set && !volumeNameFilterPattern.MatchString(v[0]) {
		errs = append(errs, "invalid value for name search parameter")
	}
	if v, set := q["type"]; set {
		errs = append(errs, validateVolumeType(v[0], true)...)
	}
	if v, set := q["size"]; set && !volumeSizeFilter.MatchString(v[0]) {
		errs = append(errs, "invalid value for size search parameter, must match "+volumeSizeFilterPattern)
	}
	if v, set := q["state"]; set && !slices.Contains(VolumeStates, v[0]) {
		errs = append(errs, "Volume state: "+v[0]+" is invalid")
	}
	if len(errs) > 0 {
		resp := invalidParams(errs)
		return &resp
	}
	if _, set := q["predicate"]; set {
		resp := invalid("the predicate parameter is not simulated by tritonsim")
		return &resp
	}
	return nil
}

// volumeMatches reports whether v passes the list's filters.
func volumeMatches(v *Volume, q map[string][]string) bool {
	if state, set := q["state"]; set {
		if v.State != state[0] {
			return false
		}
	} else if v.State == VolumeFailed {
		return false
	}
	if name, set := q["name"]; set && !nameMatches(v.Name, name[0]) {
		return false
	}
	if size, set := q["size"]; set && strconv.FormatInt(v.Size, 10) != size[0] {
		return false
	}
	if t, set := q["type"]; set && v.Type != t[0] {
		return false
	}
	return true
}

// nameMatches is the LDAP substring match VOLAPI makes of a name filter:
// a leading * matches any prefix, a trailing * any suffix.
func nameMatches(name, filter string) bool {
	core, anyPrefix := strings.CutPrefix(filter, "*")
	core, anySuffix := strings.CutSuffix(core, "*")
	switch {
	case anyPrefix && anySuffix:
		return strings.Contains(name, core)
	case anyPrefix:
		return strings.HasSuffix(name, core)
	case anySuffix:
		return strings.HasPrefix(name, core)
	}
	return name == core
}

// getVolume serves GetVolume. The read counts towards settling the
// volume: a creating one may answer ready, a deleting one 404.
func (s *Server) getVolume(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	if fail := validVolumeID(id); fail != nil {
		return *fail
	}
	s.st.vols.settling.Read(id)
	v, found := s.st.vols.volumes.Get(id)
	if !found {
		return volumeNotFound("getting", id)
	}
	return ok(v.json())
}

// createVolume serves CreateVolume: 201 with the volume, creating until
// it settles ready (Options.ProvisioningReads reads, Advance, or
// Options.SettleAfter), or failed (FailNextVolumes).
func (s *Server) createVolume(r *http.Request) simkit.Response {
	var req map[string]any
	if fail := decode(r, &req); fail != nil {
		return *fail
	}
	v, fail := s.st.volumeFromRequest(req)
	if fail != nil {
		return *fail
	}
	v.State = VolumeCreating
	if s.st.vols.failNext > 0 {
		s.st.vols.failNext--
		v.fail = true
	}
	added, err := s.st.addVolume(v)
	if err != nil {
		// VOLAPI's InternalError, which CloudAPI hides behind its own.
		return failCode(http.StatusInternalServerError, "CloudApiError", "Error when creating volume")
	}
	return created(added.json())
}

// volumeFromRequest validates a create as CloudAPI does
// (validateCreateVolumeInput, then the networks), then as VOLAPI does
// (the networks, a name in use, the size), in their order.
func (st *state) volumeFromRequest(req map[string]any) (Volume, *simkit.Response) {
	bad := func(resp simkit.Response) (Volume, *simkit.Response) { return Volume{}, &resp }
	if errs := validateCreateVolume(req); len(errs) > 0 {
		return bad(invalidParams(errs))
	}
	var v Volume
	v.Name, _ = req["name"].(string)
	v.Type = VolumeTypeNFS
	if tags, _ := req["tags"].(map[string]any); len(tags) > 0 {
		v.Tags = map[string]string{}
		for k, val := range tags {
			v.Tags[k], _ = val.(string)
		}
	}
	if list, set := req["networks"]; set {
		ids, fabric := st.fabricNetworks(list.([]any))
		if !fabric {
			return bad(invalid("Invalid networks: %s", jsString(list, true)))
		}
		v.Networks = ids
		if len(ids) == 0 {
			return bad(volapiError(http.StatusConflict, codeVolumeValidation, "creating",
				"Validation error, causes: Error: networks must be a non-empty array"))
		}
	} else {
		n, found := st.defaultFabric()
		if !found {
			return bad(failCode(http.StatusConflict, codeNoDefaultFabric, "default_network is not configured for account"))
		}
		v.Networks = []string{n.ID}
	}
	if v.Name != "" && st.volumeNameTaken(v.Name) {
		return bad(volapiError(http.StatusConflict, codeVolumeExists, "creating", "Volume with name %s already exists", v.Name))
	}
	sizes := st.volumeSizes()
	if size, set := req["size"]; set {
		want := size.(float64)
		i := slices.IndexFunc(sizes, func(n int64) bool { return float64(n) == want })
		if i < 0 {
			avail := make([]string, len(sizes))
			for j, n := range sizes {
				avail[j] = strconv.FormatInt(n, 10)
			}
			return bad(volapiError(http.StatusConflict, codeVolumeSize, "creating",
				"Volume size %s is not available. Available sizes are: %s", jsString(size, true), strings.Join(avail, ", ")))
		}
		v.Size = sizes[i]
	} else {
		v.Size = sizes[0]
	}
	return v, nil
}

// validateCreateVolume is CloudAPI's validateCreateVolumeInput: the
// messages of every error found.
func validateCreateVolume(req map[string]any) []string {
	var errs []string
	if name, set := req["name"]; set {
		errs = append(errs, validateVolumeName(name)...)
	}
	t, set := req["type"]
	errs = append(errs, validateVolumeType(t, set)...)
	if size, set := req["size"]; set {
		if n, isNumber := size.(float64); !isNumber || n <= 0 {
			errs = append(errs, "Invalid volume size: "+jsString(size, true))
		}
	}
	if networks, set := req["networks"]; set {
		list, isList := networks.([]any)
		switch {
		case !isList:
			errs = append(errs, "Invalid networks: networks must be an array")
		case slices.ContainsFunc(list, func(n any) bool { id, _ := n.(string); return !volumeIDPattern.MatchString(id) }):
			errs = append(errs, "Invalid networks: "+jsString(networks, true))
		}
	}
	if affinity := req["affinity"]; affinity != nil {
		list, isList := affinity.([]any)
		if !isList || slices.ContainsFunc(list, func(a any) bool { _, isString := a.(string); return !isString }) {
			errs = append(errs, "Invalid affinity: affinity must be an array of strings")
		}
	}
	if tags := req["tags"]; tags != nil && !stringMap(tags) {
		errs = append(errs, "Invalid tags: tags must be an object of key/value strings")
	}
	return errs
}

// stringMap reports whether v is a JSON object of strings.
func stringMap(v any) bool {
	m, isObject := v.(map[string]any)
	for _, val := range m {
		if _, isString := val.(string); !isString {
			return false
		}
	}
	return isObject
}

// fabricNetworks are the network IDs of list, and whether each is a
// fabric network of the account (CloudAPI's checkFabricNetworks: NAPI's
// fabric networks owned by the account; an empty list passes).
func (st *state) fabricNetworks(list []any) ([]string, bool) {
	ids := []string{}
	for _, item := range list {
		id, _ := item.(string)
		n, found := st.networks.Get(id)
		if !found || !n.Fabric {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// volumeNameTaken reports whether a creating or ready volume has the name
// (VOLAPI's checkDuplicateVolume: failed and deleting ones do not count).
func (st *state) volumeNameTaken(name string) bool {
	_, taken := st.vols.volumes.Find(func(v *Volume) bool {
		return v.Name == name && (v.State == VolumeCreating || v.State == VolumeReady)
	})
	return taken
}

// activeRefs are the machines among v's refs that are active (neither
// failed nor deleted): those that keep it from being deleted (VOLAPI asks
// VMAPI which of the refs are active; a ref to no machine does not
// count).
func (st *state) activeRefs(v *Volume) []string {
	var out []string
	for _, id := range v.Refs {
		if m, found := st.machines.Get(id); found && m.State != StateDeleted && m.State != StateFailed {
			out = append(out, id)
		}
	}
	return out
}

// deleteVolume serves DeleteVolume: 204 and the volume deleting (again
// 204 while it is), gone when that settles; 409 VolumeInUse while an
// active machine refers to it; 404 VolumeNotFound once gone.
func (s *Server) deleteVolume(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	if fail := validVolumeID(id); fail != nil {
		return *fail
	}
	v, found := s.st.vols.volumes.Get(id)
	if !found {
		return volumeNotFound("deleting", id)
	}
	if refs := s.st.activeRefs(v); len(refs) > 0 {
		return volapiError(http.StatusConflict, codeVolumeInUse, "deleting",
			"Volume with name %s is used by vms: %s", v.Name, strings.Join(refs, ", "))
	}
	if v.State != VolumeDeleting {
		s.st.startVolumeDeletion(v)
	}
	return noContent()
}

// updateVolume serves UpdateVolume, which renames a volume (CloudAPI
// updates nothing else): 200 with the volume; 409 VolumeAlreadyExists for
// a name a creating or ready volume has (the volume's own included, as
// VOLAPI checks), VolumeInUse while any machine refers to it.
func (s *Server) updateVolume(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	var req map[string]any
	if fail := decode(r, &req); fail != nil {
		return *fail
	}
	var errs []string
	name, rename := req["name"]
	if rename {
		errs = validateVolumeName(name)
	}
	if !volumeIDPattern.MatchString(id) {
		errs = append(errs, "Invalid volume ID: "+id+". Volume ID should match "+volumeIDPatternText)
	}
	if len(errs) > 0 {
		return invalidParams(errs)
	}
	v, found := s.st.vols.volumes.Get(id)
	if !found {
		return volumeNotFound("updating", id)
	}
	if rename {
		newName := name.(string)
		if s.st.volumeNameTaken(newName) {
			return volapiError(http.StatusConflict, codeVolumeExists, "updating", "Volume with name %s already exists", newName)
		}
		if len(v.Refs) > 0 {
			return volapiError(http.StatusConflict, codeVolumeInUse, "updating",
				"Volume with name %s is used by vms: %s", v.Name, strings.Join(v.Refs, ", "))
		}
		v.Name = newName
	}
	return ok(v.json())
}
