package triton

import (
	"context"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

var (
	_ framework.SecretMaker     = (*Provider)(nil)
	_ framework.SecretCompleter = (*Provider)(nil)
)

// CredentialSecret implements framework.SecretMaker: the Secret
// examples/manifests/triton reads, kube-system/triton-credentials, its
// keys named like triton-go's variables (the Config fields' secret tags).
func (p *Provider) CredentialSecret() framework.CredentialSecret {
	return framework.CredentialSecret{Name: "triton-credentials"}
}

// CompleteSecret implements framework.SecretCompleter: the key itself
// under TRITON_KEY_MATERIAL (read from its file when the setting names
// one), checked to parse, and TRITON_KEY_ID its fingerprint: the one given
// when it matches the key (else an error saying so), the MD5 one CloudAPI
// lists when none was given. No error quotes the key.
func (p *Provider) CompleteSecret(_ context.Context, data map[string][]byte) error {
	cr := p.cfg.credentials()
	s, err := cloud.NewSigner(&cr)
	if err != nil {
		return err
	}
	k, err := s.Current()
	if err != nil {
		return err
	}
	text, err := s.KeyText()
	if err != nil {
		return err
	}
	data["TRITON_KEY_MATERIAL"] = text
	if p.cfg.KeyID == "" {
		data["TRITON_KEY_ID"] = []byte(k.MD5)
	}
	return nil
}
