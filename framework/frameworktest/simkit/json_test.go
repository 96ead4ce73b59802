package simkit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDecodeOptional(t *testing.T) {
	v := struct{ A int }{A: 7}
	for _, body := range []string{"", " "} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		if err := DecodeOptional(r, &v); err != nil || v.A != 7 {
			t.Errorf("body %q: %v %+v", body, err, v)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"A":1}`))
	if err := DecodeOptional(r, &v); err != nil || v.A != 1 {
		t.Errorf("a body: %v %+v", err, v)
	}
	r = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"A":`))
	if err := DecodeOptional(r, &v); err == nil {
		t.Error("a broken body decoded")
	}
}

func TestAnswer(t *testing.T) {
	h := Answer(func(*http.Request) (int, any) { return http.StatusCreated, "x" })
	if got := h(httptest.NewRequest(http.MethodPost, "/", nil)); got.Status != http.StatusCreated || got.Body != "x" {
		t.Errorf("Answer = %+v", got)
	}
}
