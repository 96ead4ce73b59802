package ranchersim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Setting is one of Cattle's settings (read-only to an environment key).
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SettingLBImage is the setting naming the load balancer image.
const SettingLBImage = "lb.instance.image"

func defaultSettings(opts Options) []Setting {
	return []Setting{
		{Name: "api.host", Value: ""},
		{Name: SettingLBImage, Value: opts.LBImage},
		{Name: "rancher.server.version", Value: RancherVersion},
	}
}

// settingDoc is a setting as the API answers it (go-rancher's Setting):
// its ID is "1as!<name>".
type settingDoc struct {
	resource
	Name        string `json:"name"`
	Value       string `json:"value"`
	ActiveValue string `json:"activeValue"`
	InDb        bool   `json:"inDb"`
	Source      string `json:"source"`
}

func settingID(name string) string { return "1as!" + name }

func (v view) setting(st Setting) settingDoc {
	id := settingID(st.Name)
	return settingDoc{
		resource: resource{ID: id, Type: "activeSetting", BaseType: "setting",
			Links: map[string]string{"self": v.self("settings", id)}, Actions: map[string]string{}},
		Name: st.Name, Value: st.Value, ActiveValue: st.Value, Source: "Database", InDb: true,
	}
}

var settingFilters = mustSchema("setting").filters

func (s *Server) listSettings(r *http.Request) simkit.Response {
	v := s.view(r)
	items := make([]*Setting, 0, len(s.st.settings))
	for i := range s.st.settings {
		items = append(items, &s.st.settings[i])
	}
	return list(s, r, listing[Setting]{
		typ: "setting", items: items, id: func(st *Setting) string { return settingID(st.Name) },
		doc: func(st *Setting) any { return v.setting(*st) }, filters: settingFilters,
	})
}

// getSetting answers GET settings/{id}, by ID ("1as!lb.instance.image")
// or name.
func (s *Server) getSetting(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	for _, st := range s.st.settings {
		if settingID(st.Name) == id || st.Name == id {
			return ok(s.view(r).setting(st))
		}
	}
	return notFound()
}

// SetSetting sets a setting (adding it if new), as an administrator
// would.
func (s *Server) SetSetting(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.st.settings {
		if s.st.settings[i].Name == name {
			s.st.settings[i].Value = value
			return
		}
	}
	s.st.settings = append(s.st.settings, Setting{Name: name, Value: value})
}
