package openstacksim

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Flavor is a Nova flavor (public, enabled, rxtx_factor 1.0).
type Flavor struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	VCPUs int    `json:"vcpus"`
	RAM   int    `json:"ram"`
	Disk  int    `json:"disk"`
	// Ephemeral is the ephemeral disk in GiB, Swap the swap disk in MiB.
	Ephemeral int `json:"ephemeral,omitempty"`
	Swap      int `json:"swap,omitempty"`
	// Description is shown from microversion 2.55 (null when "").
	Description string `json:"description,omitempty"`
	// ExtraSpecs are shown by os-extra_specs, in flavors from 2.61 and in
	// the flavor embedded in servers from 2.47.
	ExtraSpecs map[string]string `json:"extra_specs,omitempty"`
}

func (f Flavor) clone() Flavor { f.ExtraSpecs = maps.Clone(f.ExtraSpecs); return f }

// Flavors are the flavors Nova starts with (DevStack's).
var Flavors = []Flavor{
	{ID: "1", Name: "m1.tiny", VCPUs: 1, RAM: 512, Disk: 1},
	{ID: "2", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20},
	{ID: "3", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40},
	{ID: "4", Name: "m1.large", VCPUs: 4, RAM: 8192, Disk: 80},
	{ID: "5", Name: "m1.xlarge", VCPUs: 8, RAM: 16384, Disk: 160},
}

// findFlavor looks a flavor up among the default Flavors by ID or name
// (for scenario validation, before there is a server).
func findFlavor(ref string) (Flavor, bool) {
	i := slices.IndexFunc(Flavors, func(f Flavor) bool { return f.ID == ref || f.Name == ref })
	if i < 0 {
		return Flavor{}, false
	}
	return Flavors[i], true
}

// addCatalog adds the default flavors and images.
func (st *state) addCatalog() {
	for _, f := range Flavors {
		if err := st.addFlavor(f); err != nil {
			panic(err)
		}
	}
	for _, img := range Images {
		if _, err := st.addImage(img); err != nil {
			panic(err)
		}
	}
}

func (st *state) addFlavor(f Flavor) error {
	if f.ID == "" || f.Name == "" {
		return fmt.Errorf("flavor needs an ID and a name")
	}
	if _, dup := st.flavorByRef(f.ID); dup {
		return fmt.Errorf("flavor %s exists", f.ID)
	}
	f = f.clone()
	st.flavors.Put(f.ID, &f)
	return nil
}

// AddFlavor adds a flavor. It panics on a duplicate ID: it is for test
// setup.
func (s *Server) AddFlavor(f Flavor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.addFlavor(f); err != nil {
		panic("openstacksim.AddFlavor: " + err.Error())
	}
}

// flavorByRef resolves a flavor ID or name.
func (st *state) flavorByRef(ref string) (*Flavor, bool) {
	if f, ok := st.flavors.Get(ref); ok {
		return f, true
	}
	for _, f := range st.flavors.All() {
		if f.Name == ref {
			return f, true
		}
	}
	return nil, false
}

func (s *Server) flavorRoutes() {
	c := computeV21
	s.novaHandle("GET "+c+"/flavors", s.listFlavors(false))
	s.novaHandle("GET "+c+"/flavors/detail", s.listFlavors(true))
	s.novaHandle("GET "+c+"/flavors/{id}", s.getFlavor)
	s.novaHandle("GET "+c+"/flavors/{id}/os-extra_specs", s.flavorExtraSpecs)
	s.novaHandle("GET "+c+"/flavors/{id}/os-extra_specs/{key}", s.flavorExtraSpec)
	s.novaHandle("PUT "+c+"/flavors/{id}", func(_ *http.Request, minor int) response {
		if minor < 55 {
			return novaError(http.StatusNotFound, "The resource could not be found.")
		}
		return policyForbidden("os_compute_api:os-flavor-manage:update")
	})
	s.novaHandle("POST "+c+"/flavors/{id}/action", s.flavorAction)
}

// flavorJSON is a flavor as Nova shows it at microversion 2.minor: id,
// name and links, with detail the sizes too; description from 2.55,
// extra_specs (detail) from 2.61, swap 0 rather than "" from 2.75.
func flavorJSON(r *http.Request, f *Flavor, detail bool, minor int) map[string]any {
	base := simkit.BaseURL(r)
	out := map[string]any{"id": f.ID, "name": f.Name, "links": []link{
		{Rel: "self", Href: base + computeV21 + "/flavors/" + f.ID},
		{Rel: "bookmark", Href: base + computePrefix + "/flavors/" + f.ID},
	}}
	if minor >= 55 {
		out["description"] = nullable(f.Description)
	}
	if !detail {
		return out
	}
	var swap any = f.Swap
	if f.Swap == 0 && minor < 75 {
		swap = ""
	}
	maps.Copy(out, map[string]any{
		"vcpus": f.VCPUs, "ram": f.RAM, "disk": f.Disk, "swap": swap, "rxtx_factor": 1.0,
		"OS-FLV-EXT-DATA:ephemeral": f.Ephemeral, "OS-FLV-DISABLED:disabled": false, "os-flavor-access:is_public": true,
	})
	if minor >= 61 {
		out["extra_specs"] = nonNilMap(f.ExtraSpecs)
	}
	return out
}

// flavorSortKeys map Nova's flavor sort keys to the view's attributes.
var flavorSortKeys = map[string]string{
	"flavorid": "id", "id": "id", "name": "name", "memory_mb": "ram", "root_gb": "disk", "vcpus": "vcpus",
	"swap": "swap", "ephemeral_gb": "OS-FLV-EXT-DATA:ephemeral", "created_at": "id",
}

// listFlavors is GET /flavors[/detail]: minRam and minDisk filters,
// sort_key (default flavorid) and sort_dir (default asc), limit and
// marker.
func (s *Server) listFlavors(detail bool) novaHandlerFunc {
	return func(r *http.Request, minor int) response {
		q := r.URL.Query()
		mins := map[string]int{}
		for _, k := range []string{"minRam", "minDisk"} {
			if v := q.Get(k); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return novaError(http.StatusBadRequest, "Invalid %s filter [%s]", k, v)
				}
				mins[k] = n
			}
		}
		key := flavorSortKeys[cmp.Or(q.Get("sort_key"), "flavorid")]
		dir := cmp.Or(q.Get("sort_dir"), "asc")
		if key == "" || dir != "asc" && dir != "desc" {
			return novaError(http.StatusBadRequest, "Invalid sort key or direction: %s %s", q.Get("sort_key"), dir)
		}
		var flavors []*Flavor
		for _, f := range s.st.flavors.All() {
			if f.RAM >= mins["minRam"] && f.Disk >= mins["minDisk"] {
				flavors = append(flavors, f)
			}
		}
		slices.SortStableFunc(flavors, func(a, b *Flavor) int {
			c := compareAttr(flavorJSON(r, a, true, 75)[key], flavorJSON(r, b, true, 75)[key])
			if dir == "desc" {
				return -c
			}
			return c
		})
		items := []map[string]any{}
		for _, f := range flavors {
			items = append(items, flavorJSON(r, f, detail, minor))
		}
		p, errResp := s.paginate(r, items, novaPages, "")
		if errResp != nil {
			return *errResp
		}
		return jsonOK(listBody("flavors", p))
	}
}

func (s *Server) flavor(r *http.Request) (*Flavor, *response) {
	if f, ok := s.st.flavors.Get(r.PathValue("id")); ok {
		return f, nil
	}
	resp := novaError(http.StatusNotFound, "Flavor %s could not be found.", r.PathValue("id"))
	return nil, &resp
}

func (s *Server) getFlavor(r *http.Request, minor int) response {
	f, errResp := s.flavor(r)
	if errResp != nil {
		return *errResp
	}
	return jsonOK(map[string]any{"flavor": flavorJSON(r, f, true, minor)})
}

func (s *Server) flavorExtraSpecs(r *http.Request, _ int) response {
	f, errResp := s.flavor(r)
	if errResp != nil {
		return *errResp
	}
	return jsonOK(map[string]any{"extra_specs": nonNilMap(f.ExtraSpecs)})
}

func (s *Server) flavorExtraSpec(r *http.Request, _ int) response {
	f, errResp := s.flavor(r)
	if errResp != nil {
		return *errResp
	}
	key := r.PathValue("key")
	v, ok := f.ExtraSpecs[key]
	if !ok {
		return novaError(http.StatusNotFound, "Flavor %s has no extra specs with key %s.", f.ID, key)
	}
	return jsonOK(map[string]string{key: v})
}

// flavorAction serves addTenantAccess and removeTenantAccess, which only
// an admin may call.
func (s *Server) flavorAction(r *http.Request, _ int) response {
	var body map[string]any
	if err := simkit.Decode(r, &body); err != nil {
		return novaError(http.StatusBadRequest, "Invalid request body: %v", err)
	}
	switch {
	case hasKey(body, "addTenantAccess"):
		return policyForbidden("os_compute_api:os-flavor-access:add_tenant_access")
	case hasKey(body, "removeTenantAccess"):
		return policyForbidden("os_compute_api:os-flavor-access:remove_tenant_access")
	}
	return novaError(http.StatusBadRequest, "There is no such action: %v", slices.Sorted(mapKeys(body)))
}

// nullable is s, or JSON null when s is "".
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
