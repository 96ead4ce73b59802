package openstacksim

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"net/http"
	"slices"
)

// VolumeType is a Cinder volume type. Members see every public type's
// id, name, description and is_public; extra specs are an admin's
// (cinder/api/v3/views/types.py), but they take effect: a type with
// "multiattach": "<is> True" makes multiattach volumes, as Cinder's
// create flow reads it.
type VolumeType struct {
	// ID defaults to one derived from the name, the same in every project.
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	ExtraSpecs  map[string]string `json:"extraSpecs,omitempty"`
}

// DefaultVolumeTypes are the volume types Cinder has when Options name
// none: __DEFAULT__, the type every Cinder since Train has and the
// default one (default_volume_type), lvmdriver-1 as DevStack makes it,
// and a multiattach type, the way Cinder makes multiattach volumes since
// the multiattach create parameter went.
var DefaultVolumeTypes = []VolumeType{
	{Name: "__DEFAULT__", Description: "Default Volume Type"},
	{Name: "lvmdriver-1"},
	{Name: "multiattach", Description: "Volumes that attach to several servers", ExtraSpecs: map[string]string{"multiattach": "<is> True"}},
}

// volumeTypeID is the ID of the volume type called name: a UUID derived
// from the name.
func volumeTypeID(name string) string {
	h := sha256.Sum256([]byte("volume-type\x00" + name))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// volumeTypes are the configured types, the default first.
func (s *Server) volumeTypes() []VolumeType { return s.opts.VolumeTypes }

// volumeTypeByRef is the type with ID or name ref.
func (s *Server) volumeTypeByRef(ref string) (VolumeType, bool) {
	for _, vt := range s.volumeTypes() {
		if vt.ID == ref || vt.Name == ref {
			return vt, true
		}
	}
	return VolumeType{}, false
}

// multiattach reports whether volumes of the type attach to several
// servers.
func (vt VolumeType) multiattach() bool { return vt.ExtraSpecs["multiattach"] == "<is> True" }

func (vt VolumeType) view() map[string]any {
	return map[string]any{"id": vt.ID, "name": vt.Name, "is_public": true, "description": nullable(vt.Description)}
}

// normalizeVolumeTypes fills in the types' IDs (DefaultVolumeTypes when
// there are none) and copies them.
func normalizeVolumeTypes(in []VolumeType) []VolumeType {
	if len(in) == 0 {
		in = DefaultVolumeTypes
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].ExtraSpecs = maps.Clone(out[i].ExtraSpecs)
		if out[i].ID == "" {
			out[i].ID = volumeTypeID(out[i].Name)
		}
	}
	return out
}

func (s *Server) volumeTypeRoutes() {
	p := volumeProject
	s.cinderHandle("GET "+p+"/types", s.listVolumeTypes)
	s.cinderHandle("GET "+p+"/types/{id}", s.getVolumeType)
	s.cinderHandle("GET "+p+"/types/{id}/extra_specs", func(*http.Request, int) response {
		return cinderPolicyForbidden("volume_extension:types_extra_specs:index")
	})
	s.cinderHandle("POST "+p+"/types", func(*http.Request, int) response {
		return cinderPolicyForbidden("volume_extension:types_manage")
	})
}

// listVolumeTypes is GET /types: the public types, sorted by name (a
// member cannot ask for private ones), paged as volumes are.
func (s *Server) listVolumeTypes(r *http.Request, _ int) response {
	types := slices.Clone(s.volumeTypes())
	items := make([]map[string]any, 0, len(types))
	for _, vt := range types {
		items = append(items, vt.view())
	}
	p, errResp := s.cinderPage(r, items, "Volume type")
	if errResp != nil {
		return *errResp
	}
	body := map[string]any{"volume_types": p.items}
	if len(p.links) > 0 {
		body["volume_type_links"] = p.links
	}
	return jsonOK(body)
}

// getVolumeType is GET /types/{id}: by ID (or "default", the default
// type); a name is not an ID (404, as Cinder's get_volume_type).
func (s *Server) getVolumeType(r *http.Request, _ int) response {
	id := r.PathValue("id")
	if id == "default" {
		return jsonOK(map[string]any{"volume_type": s.volumeTypes()[0].view()})
	}
	for _, vt := range s.volumeTypes() {
		if vt.ID == id {
			return jsonOK(map[string]any{"volume_type": vt.view()})
		}
	}
	return cinderError(http.StatusNotFound, "Volume type %s could not be found.", id)
}
