package tritonsim

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// DefaultKeyName is the account key's name when Options.KeyName is "".
const DefaultKeyName = "account-key"

// Key is one of the account's SSH keys, as ListKeys and GetKey serve it
// (sdc-cloudapi lib/keys.js translateKey): its name (the fingerprint when
// it was given none), its MD5 fingerprint in colon-separated hex and the
// public key in OpenSSH form. Every key of the account signs requests.
type Key struct {
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint"`
	Key         string `json:"key"`

	sha256 string
	// privatePEM and keyFile: a key a scenario generated, whose private
	// half WriteKeyFile writes to keyFile.
	privatePEM []byte
	keyFile    string
}

// matches reports whether ref names k: its name or either fingerprint, as
// CloudAPI's /:login/keys/:key takes either ("MD5:" optional).
func (k *Key) matches(ref string) bool {
	return k.Name == ref || k.Fingerprint == strings.TrimPrefix(ref, "MD5:") ||
		strings.TrimRight(ref, "=") == k.sha256
}

// Keys returns the account's keys, oldest first.
func (s *Server) Keys() []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.keys, func(k *Key) Key { return *k })
}

// addAccountKey lets the holder of pub's private half sign for the account
// and lists it as name ("" means its fingerprint); a name or key the
// account has already is refused. The state lock must be held.
func (s *Server) addAccountKey(name string, pub ssh.PublicKey) (*Key, error) {
	k := &Key{Name: name, Fingerprint: ssh.FingerprintLegacyMD5(pub), sha256: ssh.FingerprintSHA256(pub),
		Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))}
	if k.Name == "" {
		k.Name = k.Fingerprint
	}
	if slices.ContainsFunc(s.st.keys, func(o *Key) bool { return o.Name == k.Name || o.Fingerprint == k.Fingerprint }) {
		return nil, fmt.Errorf("key %s (%s) already exists", k.Name, k.Fingerprint)
	}
	if _, _, err := s.sig.AddKey(s.opts.Account, "", pub); err != nil {
		return nil, err
	}
	s.st.keys = append(s.st.keys, k)
	return k, nil
}

// removeAccountKey revokes the account key that ref names. The state lock
// must be held.
func (s *Server) removeAccountKey(ref string) bool {
	i := slices.IndexFunc(s.st.keys, func(k *Key) bool { return k.matches(ref) })
	if i < 0 {
		return false
	}
	s.sig.RemoveKey(s.opts.Account, "", s.st.keys[i].Fingerprint)
	s.st.keys = slices.Delete(s.st.keys, i, i+1)
	return true
}

// namedKey is the account key r's {name} names: 404 for none.
func (s *Server) namedKey(r *http.Request) (*Key, *simkit.Response) {
	ref := r.PathValue("name")
	i := slices.IndexFunc(s.st.keys, func(k *Key) bool { return k.matches(ref) })
	if i < 0 {
		resp := notFound("key", ref)
		return nil, &resp
	}
	return s.st.keys[i], nil
}

// listKeys serves ListKeys: every key of the account.
func (s *Server) listKeys(*http.Request) simkit.Response {
	return ok(simkit.CloneAll(s.st.keys, func(k *Key) Key { return *k }))
}

// getKey serves GetKey, by name or fingerprint.
func (s *Server) getKey(r *http.Request) simkit.Response {
	k, fail := s.namedKey(r)
	if fail != nil {
		return *fail
	}
	return ok(*k)
}

// createKey serves CreateKey: {"name", "key"} (an OpenSSH public key) ->
// 201 with the key and its Location; no key is 409 MissingParameter, a
// key that does not parse or that the account has (or a name it has)
// 409 InvalidArgument.
func (s *Server) createKey(r *http.Request) simkit.Response {
	var req struct {
		Name *string `json:"name"`
		Key  any     `json:"key"`
	}
	if fail := decode(r, &req); fail != nil {
		return *fail
	}
	text, isString := req.Key.(string)
	switch {
	case req.Key == nil || text == "" && isString:
		return failCode(http.StatusConflict, codeMissingParameter, "key is a required argument")
	case !isString:
		return invalid("key must be a String")
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(text))
	if err != nil {
		return invalid("key is invalid")
	}
	var name string
	if req.Name != nil {
		name = *req.Name
	}
	k, err := s.addAccountKey(name, pub)
	if err != nil {
		return invalid("key already exists or is invalid")
	}
	resp := created(*k)
	resp.Header = http.Header{"Location": {"/" + s.opts.Account + "/keys/" + url.PathEscape(k.Fingerprint)}}
	return resp
}

// deleteKey serves DeleteKey: 204, the key revoked.
func (s *Server) deleteKey(r *http.Request) simkit.Response {
	k, fail := s.namedKey(r)
	if fail != nil {
		return *fail
	}
	s.removeAccountKey(k.Fingerprint)
	return noContent()
}
