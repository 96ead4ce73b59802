package tritonsim

import (
	"crypto"
	"crypto/md5" //nolint:gosec // CMON names the signing key by its MD5 fingerprint
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// OIDJoyentCMON is the extended key usage "joyentCmon" that marks a
// new-style CMON client certificate (Joyent's OID arc, as sshpk knows it).
var OIDJoyentCMON = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 38678, 1, 4, 2}

// cmonAuthenticate checks the request's TLS client certificate as CMON's
// authenticationHandler (lib/common.js) does and returns the account's
// login, or a 401 Unauthorized:
//
//   - a certificate with the joyentCmon purpose (new style) must be within
//     its validity period; unless it is self-signed, its issuer's CN names
//     the account key that signed it by MD5 fingerprint, as sshpk parses
//     one ("MD5:<base64>", unpadded or not, or colon-separated hex);
//   - any other certificate (old style, expiry ignored) is named by its
//     own public key;
//
// and then the subject's CN must be the account's login, the key named one
// of the account's, and the certificate's signature verify with it.
func (s *Server) cmonAuthenticate(r *http.Request) (string, *simkit.Response) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", cmonUnauthorized("a client certificate is required")
	}
	cert := r.TLS.PeerCertificates[0]
	signer, err := cmonSignerFingerprint(cert, s.opts.Now())
	if err == nil {
		err = s.cmonCheckIssuer(cert, signer)
	}
	if err != nil {
		return "", cmonUnauthorized("%s", err.Error())
	}
	return cert.Subject.CommonName, nil
}

// cmonSignerFingerprint is the MD5 fingerprint (raw) of the key that must
// have signed cert, or why the certificate names none.
func cmonSignerFingerprint(cert *x509.Certificate, now time.Time) ([]byte, error) {
	own, err := md5Fingerprint(cert.PublicKey)
	if !slices.ContainsFunc(cert.UnknownExtKeyUsage, OIDJoyentCMON.Equal) {
		return own, err
	}
	if now.Before(cert.NotBefore) || !now.Before(cert.NotAfter) {
		return nil, errors.New("the client certificate has expired or is not valid yet")
	}
	if slices.Equal(cert.RawSubject, cert.RawIssuer) {
		return own, err
	}
	fp, ok := parseMD5Fingerprint(cert.Issuer.CommonName)
	if !ok {
		return nil, fmt.Errorf("the client certificate's issuer CN %q is not an MD5 key fingerprint", cert.Issuer.CommonName)
	}
	return fp, nil
}

// cmonCheckIssuer checks that cert's subject is the account and that the
// account key with fingerprint fp signed it.
func (s *Server) cmonCheckIssuer(cert *x509.Certificate, fp []byte) error {
	if cert.Subject.CommonName != s.opts.Account {
		return fmt.Errorf("no account %q", cert.Subject.CommonName)
	}
	for _, key := range s.sig.PublicKeys(s.opts.Account, "") {
		if keyFP, err := md5Fingerprint(key); err != nil || !slices.Equal(keyFP, fp) {
			continue
		}
		signer := &x509.Certificate{PublicKey: key}
		if err := signer.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
			return fmt.Errorf("the client certificate is not signed by the key it names: %w", err)
		}
		return nil
	}
	return fmt.Errorf("the key %s is not one of %s's", base64.RawStdEncoding.EncodeToString(fp), s.opts.Account)
}

// md5Fingerprint is the MD5 hash of pub in SSH wire form: what ssh-keygen
// -E md5 prints in hex and sshpk's fingerprint('md5') holds.
func md5Fingerprint(pub crypto.PublicKey) ([]byte, error) {
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("the certificate's key: %w", err)
	}
	sum := md5.Sum(k.Marshal()) //nolint:gosec // a key's name, not a signature
	return sum[:], nil
}

// parseMD5Fingerprint reads an MD5 fingerprint as sshpk.parseFingerprint
// does: "MD5:<base64>" (what fingerprint('md5').toString('base64')
// writes, padding stripped), or hex pairs separated by colons with an
// optional "MD5:" prefix.
func parseMD5Fingerprint(s string) ([]byte, bool) {
	parts := strings.Split(s, ":")
	switch {
	case len(parts) == 2 && strings.EqualFold(parts[0], "md5"):
		fp, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(parts[1], "="))
		return fp, err == nil && len(fp) == md5.Size
	case len(parts) > 2:
		if strings.EqualFold(parts[0], "md5") {
			parts = parts[1:]
		}
		for i, p := range parts {
			if len(p) < 2 {
				parts[i] = strings.Repeat("0", 2-len(p)) + p
			}
		}
		fp, err := hex.DecodeString(strings.Join(parts, ""))
		return fp, err == nil && len(fp) == md5.Size
	}
	return nil, false
}

func cmonUnauthorized(format string, args ...any) *simkit.Response {
	resp := failCode(http.StatusUnauthorized, "Unauthorized", format, args...)
	return &resp
}
