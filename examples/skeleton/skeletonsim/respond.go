package skeletonsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// apiError is the body of every error response.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var errorCodes = map[int]string{
	http.StatusBadRequest:          "bad_request",
	http.StatusUnauthorized:        "unauthorized",
	http.StatusForbidden:           "forbidden",
	http.StatusNotFound:            "not_found",
	http.StatusConflict:            "conflict",
	http.StatusUnprocessableEntity: "unprocessable_entity",
	http.StatusTooManyRequests:     "rate_limited",
	http.StatusInternalServerError: "internal_error",
	http.StatusServiceUnavailable:  "service_unavailable",
}

func errorBody(status int, message string) apiError {
	var e apiError
	e.Error.Code = errorCodes[status]
	if e.Error.Code == "" {
		e.Error.Code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	e.Error.Message = message
	return e
}

// fail returns an error response for a handlerFunc.
func fail(status int, format string, args ...any) (int, any) {
	return status, errorBody(status, fmt.Sprintf(format, args...))
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	data, err := json.Marshal(body)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"encoding response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// bufferBody replaces r.Body, of at most maxBodyBytes, by an in-memory copy.
func bufferBody(r *http.Request) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return fmt.Errorf("reading request body: %w", err)
	}
	if len(data) > maxBodyBytes {
		return fmt.Errorf("request body larger than %d bytes", maxBodyBytes)
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	return nil
}

// decode reads a JSON request body into v, rejecting unknown fields and
// trailing data so that client bugs surface as 400s.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("invalid JSON body: trailing data after the object")
	}
	return nil
}

// pageMeta is the "meta" object of every list response.
type pageMeta struct {
	Page     int `json:"page"`
	PerPage  int `json:"per_page"`
	Total    int `json:"total"`
	NextPage int `json:"next_page"`
}

// paginate returns the page of items that r asks for with ?page= (from 1)
// and ?per_page= (capped at MaxPerPage).
func paginate[T any](r *http.Request, items []T, perPage int) ([]T, pageMeta, error) {
	q := r.URL.Query()
	page, err := positiveParam(q.Get("page"), 1)
	if err != nil {
		return nil, pageMeta{}, fmt.Errorf("page: %w", err)
	}
	if perPage, err = positiveParam(q.Get("per_page"), perPage); err != nil {
		return nil, pageMeta{}, fmt.Errorf("per_page: %w", err)
	}
	perPage = min(perPage, MaxPerPage)
	meta := pageMeta{Page: page, PerPage: perPage, Total: len(items)}
	start := len(items)
	if page-1 < len(items)/perPage+1 { // no overflow for huge pages
		start = min((page-1)*perPage, len(items))
	}
	end := min(start+perPage, len(items))
	if end < len(items) {
		meta.NextPage = page + 1
	}
	return items[start:end], meta, nil
}

func positiveParam(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a positive integer, got %q", v)
	}
	return n, nil
}
