package simkit

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"sync"
)

// BasicAuth holds the HTTP Basic credentials (RFC 7617) a simulated API
// accepts, such as Rancher's API keys: an access key as the user name and
// its secret key as the password. The zero BasicAuth accepts nobody; it is
// safe for concurrent use.
type BasicAuth struct {
	mu    sync.Mutex
	users map[string]string
}

// Set makes the API accept user with password, and no longer with the
// password it had before.
func (b *BasicAuth) Set(user, password string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.users == nil {
		b.users = map[string]string{}
	}
	b.users[user] = password
}

// Delete revokes user.
func (b *BasicAuth) Delete(user string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.users, user)
}

// Check returns the user r authenticates as with its "Authorization:
// Basic" header; ok is false without one, or for an unknown user or a
// wrong password.
func (b *BasicAuth) Check(r *http.Request) (user string, ok bool) {
	user, password, found := r.BasicAuth()
	if !found {
		return "", false
	}
	b.mu.Lock()
	want, known := b.users[user]
	b.mu.Unlock()
	// Compare even for an unknown user, so timing does not tell users apart.
	match := subtle.ConstantTimeCompare([]byte(password), []byte(want)) == 1
	return user, known && match
}

// BasicChallenge is the WWW-Authenticate header of a 401 to a request
// without valid Basic credentials.
func BasicChallenge(realm string) string {
	return "Basic realm=" + strconv.Quote(realm)
}
