package dosim

import (
	"net/http"
	"slices"
)

// Certificate is a TLS certificate as the API serves it.
type Certificate struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	DNSNames        []string `json:"dns_names"`
	NotAfter        string   `json:"not_after"`
	SHA1Fingerprint string   `json:"sha1_fingerprint"`
	Created         string   `json:"created_at"`
	// State is "pending", "verified" or "error".
	State string `json:"state"`
	// Type is "custom" or "lets_encrypt".
	Type string `json:"type"`
}

// AddCertificate stores a certificate and returns it as stored. Zero fields
// get defaults: the next ID, state verified, type custom. Adding one with
// an existing ID replaces it, as a Let's Encrypt rotation would.
func (s *Server) AddCertificate(c Certificate) Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if c.ID == "" {
		c.ID = uuid(3, len(st.certOrder)+1)
	}
	if c.Name == "" {
		c.Name = "cert-" + c.ID[:8]
	}
	if c.State == "" {
		c.State = "verified"
	}
	if c.Type == "" {
		c.Type = "custom"
	}
	if c.NotAfter == "" {
		c.NotAfter = "2034-01-01T00:00:00Z"
	}
	if c.Created == "" {
		c.Created = created
	}
	if c.SHA1Fingerprint == "" {
		c.SHA1Fingerprint = "dfcc9f57d86bf58e321c2c6c31c7a971be244ac7"
	}
	c.DNSNames = append([]string{}, c.DNSNames...)
	if _, ok := st.certs[c.ID]; !ok {
		st.certOrder = append(st.certOrder, c.ID)
	}
	st.certs[c.ID] = &c
	return c
}

// DeleteCertificate removes a certificate and reports whether it existed.
func (s *Server) DeleteCertificate(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.certs[id]; !ok {
		return false
	}
	delete(s.st.certs, id)
	s.st.certOrder = slices.DeleteFunc(s.st.certOrder, func(x string) bool { return x == id })
	return true
}

// listCertificates serves GET /v2/certificates with page, per_page and
// godo's ListByName (name=, exact).
func (s *Server) listCertificates(r *http.Request) (int, any) {
	name := r.URL.Query().Get("name")
	certs := []Certificate{}
	for _, id := range s.st.certOrder {
		c := s.st.certs[id]
		if name == "" || c.Name == name {
			certs = append(certs, *c)
		}
	}
	return list(r, "certificates", certs, s.opts.PerPage)
}

func (s *Server) getCertificate(r *http.Request) (int, any) {
	c, ok := s.st.certs[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	return http.StatusOK, map[string]any{"certificate": *c}
}
