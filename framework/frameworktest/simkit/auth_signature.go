package simkit

import (
	"cmp"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	_ "crypto/sha1" //nolint:gosec // rsa-sha1: CloudAPI accepts it, so the simulator verifies it
	_ "crypto/sha256"
	_ "crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// DefaultMaxClockSkew is how far a signed request's Date may be from the
// server's clock when SignatureOptions leave MaxSkew 0: CloudAPI's five
// minutes.
const DefaultMaxClockSkew = 5 * time.Minute

// Errors of HTTPSignature.Verify; each is a 401.
var (
	// ErrNoSignature: no "Authorization: Signature" header.
	ErrNoSignature = errors.New("no Signature authorization")
	// ErrMalformedSignature: the header's parameters do not parse, its
	// keyId is not /<account>/keys/<fingerprint> or
	// /<account>/users/<user>/keys/<fingerprint>, or it signs no date.
	ErrMalformedSignature = errors.New("malformed Signature authorization")
	// ErrUnknownKey: no key of that account (and user) has the keyId's
	// fingerprint.
	ErrUnknownKey = errors.New("unknown key")
	// ErrBadSignature: the signature does not verify with the key, or the
	// algorithm does not fit it.
	ErrBadSignature = errors.New("the signature does not verify")
	// ErrClockSkew: the Date header is missing, malformed, or too far
	// from the server's clock.
	ErrClockSkew = errors.New("the Date header is missing or too far from the server's clock")
)

// SignatureOptions configure an HTTPSignature.
type SignatureOptions struct {
	// MaxSkew is how far a request's Date may be from Now; 0 means
	// DefaultMaxClockSkew.
	MaxSkew time.Duration
	// Now is the server's clock; nil means time.Now.
	Now func() time.Time
}

// HTTPSignature verifies HTTP Signatures (draft-cavage-http-signatures) in
// the Authorization header, as Triton's CloudAPI takes them:
//
//	Authorization: Signature keyId="/<account>/keys/<fingerprint>",algorithm="rsa-sha256",headers="date",signature="<base64>"
//
// The signing string is "date: <Date header>" (headers="date", the
// default) or the lines of the headers listed, "(request-target)" among
// them; the date must be signed, and within MaxSkew of the server's clock.
// A keyId names the account's key, or with /<account>/users/<user>/keys/
// a sub-user's, by its MD5 fingerprint (colon-separated hex, "MD5:" prefix
// optional) or its SHA256 one ("SHA256:" and unpadded base64), as
// ssh-keygen -l writes them. Algorithms: rsa-sha1, rsa-sha256 and
// rsa-sha512 (PKCS #1 v1.5) with RSA keys; ecdsa-sha256, ecdsa-sha384 and
// ecdsa-sha512 (an ASN.1 signature) with ECDSA keys; ed25519-sha512 (or
// ed25519) with Ed25519 keys. HTTPSignature is safe for concurrent use.
type HTTPSignature struct {
	maxSkew time.Duration
	now     func() time.Time

	mu   sync.Mutex
	keys map[keyOwner][]signingKey
}

type keyOwner struct{ account, user string }

type signingKey struct {
	md5, sha256 string
	pub         crypto.PublicKey
}

// Signer is who signed a request.
type Signer struct {
	Account string
	// User is the sub-user, "" for the account itself.
	User string
	// Fingerprint is the key's MD5 fingerprint.
	Fingerprint string
}

// NewHTTPSignature returns a verifier that knows no key yet.
func NewHTTPSignature(o SignatureOptions) *HTTPSignature {
	if o.MaxSkew <= 0 {
		o.MaxSkew = DefaultMaxClockSkew
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &HTTPSignature{maxSkew: o.MaxSkew, now: o.Now, keys: map[keyOwner][]signingKey{}}
}

// AddKey lets user (or, for "", the account itself) of account sign with
// the private half of key: an *rsa.PublicKey, *ecdsa.PublicKey,
// ed25519.PublicKey or ssh.PublicKey. It returns the key's fingerprints,
// either of which a keyId may give.
func (h *HTTPSignature) AddKey(account, user string, key any) (md5, sha256 string, err error) {
	pub, ok := key.(ssh.PublicKey)
	if !ok {
		if pub, err = ssh.NewPublicKey(key); err != nil {
			return "", "", fmt.Errorf("signing key: %w", err)
		}
	}
	cp, ok := pub.(ssh.CryptoPublicKey)
	if !ok {
		return "", "", fmt.Errorf("signing key: %s keys are not supported", pub.Type())
	}
	k := signingKey{md5: ssh.FingerprintLegacyMD5(pub), sha256: ssh.FingerprintSHA256(pub), pub: cp.CryptoPublicKey()}
	h.mu.Lock()
	defer h.mu.Unlock()
	o := keyOwner{account, user}
	h.keys[o] = append(h.keys[o], k)
	return k.md5, k.sha256, nil
}

// AddAuthorizedKey is AddKey for a public key written as in an
// authorized_keys file ("ssh-ed25519 AAAA… comment").
func (h *HTTPSignature) AddAuthorizedKey(account, user, line string) (md5, sha256 string, err error) {
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return "", "", fmt.Errorf("signing key: %w", err)
	}
	return h.AddKey(account, user, pub)
}

// RemoveKey revokes the key of account (and user) with fingerprint, in
// either form.
func (h *HTTPSignature) RemoveKey(account, user, fingerprint string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := keyOwner{account, user}
	for i, k := range h.keys[o] {
		if k.matches(fingerprint) {
			h.keys[o] = slices.Delete(h.keys[o], i, i+1)
			return
		}
	}
}

// PublicKeys returns the keys of account (and user, "" for the account
// itself) in the order they were added: *rsa.PublicKey, *ecdsa.PublicKey
// or ed25519.PublicKey. It is what a service that authenticates by other
// means than a signed request (Triton's CMON, by client certificates)
// checks against the same key store.
func (h *HTTPSignature) PublicKeys(account, user string) []crypto.PublicKey {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []crypto.PublicKey
	for _, k := range h.keys[keyOwner{account, user}] {
		out = append(out, k.pub)
	}
	return out
}

// keyIDPattern is a keyId: /<account>/keys/<fp> or
// /<account>/users/<user>/keys/<fp>, where a SHA256 fp may hold slashes.
var keyIDPattern = regexp.MustCompile(`^/([^/]+)/(?:users/([^/]+)/)?keys/(.+)$`)

// Verify checks r's Authorization: Signature header and returns who signed
// it, or one of the errors above (wrapped with what is wrong).
func (h *HTTPSignature) Verify(r *http.Request) (Signer, error) {
	params, err := signatureParams(r.Header.Get("Authorization"))
	if err != nil {
		return Signer{}, err
	}
	m := keyIDPattern.FindStringSubmatch(params["keyId"])
	if m == nil {
		return Signer{}, fmt.Errorf("%w: keyId %q", ErrMalformedSignature, params["keyId"])
	}
	signer := Signer{Account: m[1], User: m[2]}
	headers := strings.Fields(strings.ToLower(cmp.Or(params["headers"], "date")))
	if !slices.Contains(headers, "date") {
		return Signer{}, fmt.Errorf("%w: the date is not signed", ErrMalformedSignature)
	}
	if err := h.checkDate(r.Header.Get("Date")); err != nil {
		return Signer{}, err
	}
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil || len(sig) == 0 {
		return Signer{}, fmt.Errorf("%w: the signature is not base64", ErrMalformedSignature)
	}
	key, ok := h.key(signer, m[3])
	if !ok {
		return Signer{}, fmt.Errorf("%w: %s", ErrUnknownKey, params["keyId"])
	}
	signer.Fingerprint = key.md5
	if err := verifySignature(key.pub, params["algorithm"], []byte(signingString(r, headers)), sig); err != nil {
		return Signer{}, err
	}
	return signer, nil
}

func (h *HTTPSignature) key(s Signer, fingerprint string) (signingKey, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range h.keys[keyOwner{s.Account, s.User}] {
		if k.matches(fingerprint) {
			return k, true
		}
	}
	return signingKey{}, false
}

// matches reports whether fp is k's MD5 (colon hex, with or without "MD5:")
// or SHA256 fingerprint (padding optional).
func (k signingKey) matches(fp string) bool {
	if rest, ok := strings.CutPrefix(fp, "SHA256:"); ok {
		return "SHA256:"+strings.TrimRight(rest, "=") == k.sha256
	}
	return strings.ToLower(strings.TrimPrefix(fp, "MD5:")) == k.md5
}

func (h *HTTPSignature) checkDate(date string) error {
	t, err := http.ParseTime(date)
	if err != nil {
		// Go's RFC 1123 with "UTC", as triton-go writes it.
		if t, err = time.Parse(time.RFC1123, date); err != nil {
			return fmt.Errorf("%w: Date %q", ErrClockSkew, date)
		}
	}
	if skew := h.now().Sub(t); skew > h.maxSkew || skew < -h.maxSkew {
		return fmt.Errorf("%w: Date %q is %v off", ErrClockSkew, date, skew.Round(time.Second))
	}
	return nil
}

// signatureParams parses `Signature keyId="…",algorithm="…",signature="…"`.
func signatureParams(auth string) (map[string]string, error) {
	rest, ok := strings.CutPrefix(auth, "Signature ")
	if !ok {
		return nil, ErrNoSignature
	}
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		name, after, ok := strings.Cut(rest, `="`)
		value, tail, ok2 := strings.Cut(after, `"`)
		name = strings.TrimSpace(name)
		if !ok || !ok2 || name == "" {
			return nil, fmt.Errorf("%w: %q", ErrMalformedSignature, auth)
		}
		params[name] = value
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(tail), ","))
	}
	for _, p := range []string{"keyId", "algorithm", "signature"} {
		if params[p] == "" {
			return nil, fmt.Errorf("%w: no %s", ErrMalformedSignature, p)
		}
	}
	return params, nil
}

// signingString is the lines "<name>: <value>" of the signed headers.
func signingString(r *http.Request, headers []string) string {
	lines := make([]string, 0, len(headers))
	for _, name := range headers {
		var value string
		switch name {
		case "(request-target)":
			value = strings.ToLower(r.Method) + " " + r.URL.RequestURI()
		case "host":
			value = r.Host
		default:
			value = strings.Join(r.Header.Values(name), ", ")
		}
		lines = append(lines, name+": "+value)
	}
	return strings.Join(lines, "\n")
}

// verifySignature checks sig over data with pub by algorithm.
func verifySignature(pub crypto.PublicKey, algorithm string, data, sig []byte) error {
	keyType, hashName, _ := strings.Cut(strings.ToLower(algorithm), "-")
	hashes := map[string]crypto.Hash{"sha1": crypto.SHA1, "sha256": crypto.SHA256, "sha384": crypto.SHA384, "sha512": crypto.SHA512}
	hash, known := hashes[hashName]
	var ok bool
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if keyType != "rsa" || !known || hash == crypto.SHA384 {
			return fmt.Errorf("%w: algorithm %q with an RSA key", ErrBadSignature, algorithm)
		}
		ok = rsa.VerifyPKCS1v15(k, hash, digest(hash, data), sig) == nil
	case *ecdsa.PublicKey:
		if keyType != "ecdsa" || !known || hash == crypto.SHA1 {
			return fmt.Errorf("%w: algorithm %q with an ECDSA key", ErrBadSignature, algorithm)
		}
		ok = ecdsa.VerifyASN1(k, digest(hash, data), sig)
	case ed25519.PublicKey:
		if keyType != "ed25519" || hashName != "" && hashName != "sha512" {
			return fmt.Errorf("%w: algorithm %q with an Ed25519 key", ErrBadSignature, algorithm)
		}
		ok = ed25519.Verify(k, data, sig)
	default:
		return fmt.Errorf("%w: %T keys are not supported", ErrBadSignature, pub)
	}
	if !ok {
		return ErrBadSignature
	}
	return nil
}

func digest(h crypto.Hash, data []byte) []byte {
	d := h.New()
	d.Write(data)
	return d.Sum(nil)
}
