package simkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// ContentType is the Content-Type of every JSON answer. SDKs such as
// gophercloud only decode bodies whose Content-Type starts with
// application/json, and Go would sniff JSON as text/plain.
const ContentType = "application/json"

// JSON is the answer status with body.
func JSON(status int, body any) Response { return Response{Status: status, Body: body} }

// NoContent is an answer with status and no body (e.g. 204).
func NoContent(status int) Response { return Response{Status: status} }

// Answer adapts an endpoint written to return its status and the body to
// encode as JSON (nil for none) to a HandlerFunc.
func Answer(h func(r *http.Request) (status int, body any)) HandlerFunc {
	return func(r *http.Request) Response { return JSON(h(r)) }
}

// Raw is a body sent as it is, not encoded as JSON (with the
// Content-Type its Response's Header gives).
type Raw []byte

// rawBody returns body (a string or []byte) as a Raw body; anything else
// is returned unchanged.
func rawBody(body any) any {
	switch b := body.(type) {
	case string:
		return Raw(b)
	case []byte:
		return Raw(b)
	}
	return body
}

// WriteJSON writes body as JSON with status, and Content-Type ContentType
// unless w's header has one already; a nil body writes no body, a Raw
// body is written as it is.
func WriteJSON(w http.ResponseWriter, status int, body any) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	if raw, ok := body.(Raw); ok {
		w.WriteHeader(status)
		_, _ = w.Write(raw)
		return
	}
	data, err := json.Marshal(body)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"message":"encoding the response failed"}`)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", ContentType)
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// BufferBody replaces r.Body, of at most limit bytes, by an in-memory copy,
// so handlers can run with a lock held without waiting on the client.
func BufferBody(r *http.Request, limit int64) error {
	if r.Body == nil || r.Body == http.NoBody {
		r.Body = http.NoBody
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return fmt.Errorf("reading request body: %w", err)
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("request body larger than %d bytes", limit)
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	return nil
}

// Decode reads r's JSON body into v. Like most cloud APIs it ignores
// unknown fields but rejects trailing data.
func Decode(r *http.Request, v any) error { return decode(r, v, false) }

// DecodeStrict is Decode for APIs that reject unknown fields too, so that
// client bugs surface as errors.
func DecodeStrict(r *http.Request, v any) error { return decode(r, v, true) }

// DecodeOptional is Decode for a body the client may leave out: an empty
// body leaves v as it is.
func DecodeOptional(r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	if err := Decode(r, v); err != nil && !errors.Is(err, errEmptyBody) {
		return err
	}
	return nil
}

// errEmptyBody is Decode's error for a request without a body.
var errEmptyBody = errors.New("the request body is empty")

func decode(r *http.Request, v any, strict bool) error {
	dec := json.NewDecoder(r.Body)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errEmptyBody
		}
		return fmt.Errorf("invalid JSON body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("invalid JSON body: trailing data after the object")
	}
	return nil
}

// BaseURL is the scheme and host the request came to, e.g.
// "http://127.0.0.1:41234", for building absolute links back to the
// simulator whether it runs on its own listener or mounted elsewhere.
func BaseURL(r *http.Request) string {
	u := url.URL{Scheme: "http", Host: r.Host}
	if r.TLS != nil {
		u.Scheme = "https"
	}
	return u.String()
}
