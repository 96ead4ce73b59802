package triton

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/md5" //nolint:gosec // CMON names the signing key by its MD5 fingerprint
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// This file mints CMON's client certificates in the "new style" CMON
// takes (triton-cmon lib/common.js, as node-triton's `triton profile
// cmon-certgen` makes them): a key of the certificate's own (ECDSA P-256:
// CMON verifies RSA slowly), subject CN=<account login>, issuer CN=<MD5
// fingerprint of the account key, as sshpk writes it in base64>, signed by
// that account key, with the joyentCmon extended key usage. CMON looks
// the issuer's key up among the account's keys (or its administrators'),
// checks the signature with it and refuses an expired certificate. The
// account key stays in the CCM: Prometheus holds only the certificate and
// its own key. With TRITON_USER set, the sub-user's key signs; CMON takes
// it when the sub-user has the account's administrator role.

// oidJoyentCmon is the joyentCmon extended key usage
// (github.com/joyent/oid-docs), which makes CMON check a certificate's
// expiry and its issuer.
var oidJoyentCmon = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 38678, 1, 4, 2}

// cmonCertClockSkew backdates a certificate's NotBefore, so a CMON whose
// clock is a little behind ours takes it at once.
const cmonCertClockSkew = 5 * time.Minute

// sshpkMD5 is the MD5 fingerprint of an SSH public key as sshpk's
// fingerprint('md5').toString('base64') writes it, which is what CMON
// parses the issuer's CN with: "MD5:" and the unpadded standard base64 of
// the digest of the key's wire form.
func sshpkMD5(pub ssh.PublicKey) string {
	sum := md5.Sum(pub.Marshal()) //nolint:gosec // the fingerprint CMON looks keys up by
	return "MD5:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// cmonCertPair is a client certificate and its key, PEM-encoded as the
// Secret holds them.
type cmonCertPair struct {
	cert, key []byte
}

// mintCMONCert makes a certificate for login, valid from now for validity,
// signed by the account key k.
func mintCMONCert(k *cloud.PrivateKey, login string, now time.Time, validity time.Duration) (*cmonCertPair, error) {
	pub, err := ssh.NewPublicKey(k.Signer.Public())
	if err != nil {
		return nil, fmt.Errorf("minting the CMON certificate: the account key: %w", err)
	}
	own, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("minting the CMON certificate: generating its key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("minting the CMON certificate: a serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: login},
		NotBefore:    now.Add(-cmonCertClockSkew),
		NotAfter:     now.Add(validity),
		// sshpk's purposes signature and identity.
		KeyUsage:           x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		ExtKeyUsage:        []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		UnknownExtKeyUsage: []asn1.ObjectIdentifier{oidJoyentCmon},
	}
	issuer := &x509.Certificate{Subject: pkix.Name{CommonName: sshpkMD5(pub)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &own.PublicKey, k.Signer)
	if err != nil {
		return nil, fmt.Errorf("minting the CMON certificate: signing it with the account key (%s): %w", k.MD5, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(own)
	if err != nil {
		return nil, fmt.Errorf("minting the CMON certificate: encoding its key: %w", err)
	}
	return &cmonCertPair{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// cmonCertVerdict says whether a Secret's certificate serves, and why not.
type cmonCertVerdict struct {
	// renew is why a new certificate is needed, "" when none is.
	renew string
	// notAfter is the certificate's expiry (zero when it does not parse).
	notAfter time.Time
}

// checkCMONCert looks at the certificate and key a Secret holds: they
// serve while they are a pair, the certificate is one CMON takes from
// login signed by the account key k, and more than renewBefore of it
// remains (and no more than validity: a shortened setting applies at
// once). Errors never quote the key.
func checkCMONCert(certPEM, keyPEM []byte, k *cloud.PrivateKey, login string, now time.Time, validity, renewBefore time.Duration) cmonCertVerdict {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return cmonCertVerdict{renew: "tls.crt and tls.key are not a certificate and its key"}
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return cmonCertVerdict{renew: "tls.crt does not parse"}
	}
	v := cmonCertVerdict{notAfter: cert.NotAfter}
	pub, err := ssh.NewPublicKey(k.Signer.Public())
	if err != nil {
		v.renew = "the account key has no SSH form"
		return v
	}
	switch {
	case cert.Subject.CommonName != login:
		v.renew = fmt.Sprintf("its subject is CN=%s, not the account %s", cert.Subject.CommonName, login)
	case cert.Issuer.CommonName != sshpkMD5(pub):
		v.renew = "its issuer is not the account key " + k.MD5
	case !slices.ContainsFunc(cert.UnknownExtKeyUsage, oidJoyentCmon.Equal):
		v.renew = "it lacks the joyentCmon extended key usage"
	case !signedBy(cert, k):
		v.renew = "the account key " + k.MD5 + " did not sign it"
	case !cert.NotAfter.After(now.Add(renewBefore)):
		v.renew = fmt.Sprintf("it expires at %s, less than %s from now", cert.NotAfter.UTC().Format(time.RFC3339), renewBefore)
	case cert.NotAfter.After(now.Add(validity + time.Minute)):
		v.renew = fmt.Sprintf("it expires at %s, beyond the validity %s", cert.NotAfter.UTC().Format(time.RFC3339), validity)
	}
	return v
}

// errCMONSecretType is a Secret of the configured name that is not a
// kubernetes.io/tls one: someone else's, left alone.
var errCMONSecretType = errors.New("is not of type kubernetes.io/tls: it is not the metrics controller's; delete it or set TRITON_CMON_SECRET to another name")

// signedBy reports whether k signed cert.
func signedBy(cert *x509.Certificate, k *cloud.PrivateKey) bool {
	issuer := &x509.Certificate{PublicKey: k.Signer.Public()}
	return issuer.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature) == nil
}
