package main

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

// expect counts a check and fails it unless ok.
func (r *run) expect(ok bool, format string, args ...any) error {
	r.checks++
	if !ok {
		return fmt.Errorf(format, args...)
	}
	return nil
}

// expectStatus fails unless err is the API's error with status, as
// gobrightbox decodes it (brightbox.APIError).
func (r *run) expectStatus(err error, status int, what string) error {
	var ae *brightbox.APIError
	if !errors.As(err, &ae) {
		return r.expect(false, "%s: err = %v, want an API error %d", what, err, status)
	}
	return r.expect(ae.StatusCode == status && ae.ErrorName != "" && len(ae.Errors) > 0,
		"%s: %d %q %q, want %d with error_name and errors", what, ae.StatusCode, ae.ErrorName, ae.Errors, status)
}

// waitFor polls cond until it holds, or fails when the run's time is up.
// The simulator settles what is pending with time (settleAfter), as the
// real API does.
func (r *run) waitFor(what string, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			r.checks++
			return nil
		}
		select {
		case <-r.ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, r.ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// isNotFound reports whether err is the API's 404.
func isNotFound(err error) bool {
	var ae *brightbox.APIError
	return errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound
}

func ptr[T any](v T) *T { return &v }
