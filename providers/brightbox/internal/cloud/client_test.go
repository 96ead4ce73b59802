package cloud

import (
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

func TestPickAccount(t *testing.T) {
	one := []brightbox.Account{{ID: "acc-43ks4"}}
	two := []brightbox.Account{{ID: "acc-43ks4"}, {ID: "acc-12345"}}
	tests := []struct {
		name     string
		want     string
		accounts []brightbox.Account
		got      string
		err      string
	}{
		{name: "the only one", accounts: one, got: "acc-43ks4"},
		{name: "the configured one", want: "acc-12345", accounts: two, got: "acc-12345"},
		{name: "several", accounts: two, err: "BRIGHTBOX_ACCOUNT: the credentials can use several accounts (acc-43ks4, acc-12345)"},
		{name: "none", err: "BRIGHTBOX_ACCOUNT: the credentials can use no account"},
		{name: "not theirs", want: "acc-99999", accounts: one, err: "BRIGHTBOX_ACCOUNT: the credentials cannot use account acc-99999"},
		{name: "malformed", accounts: []brightbox.Account{{}}, err: "malformed response"},
	}
	for _, tt := range tests {
		got, err := pickAccount(tt.want, tt.accounts)
		switch {
		case tt.err == "" && (err != nil || got != tt.got):
			t.Errorf("%s: got %q, %v; want %q", tt.name, got, err, tt.got)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: got %q, %v; want an error with %q", tt.name, got, err, tt.err)
		}
	}
}
