package simkit

import (
	"net/http"
	"slices"
	"strings"
)

// Handle registers h for op (a ServeMux pattern with a method, e.g.
// "GET /v2/things/{id}") on mux, behind the Kit's counting, latency,
// faults, Auth, body buffering, writes counter and request log.
func (k *Kit) Handle(mux *http.ServeMux, op string, h HandlerFunc, flags ...Flag) {
	mux.Handle(op, k.Wrap(op, h, flags...))
}

// statusReset is what serve returns for a request whose connection is to
// be closed without an answer.
const statusReset = -1

// Wrap returns h as an http.Handler behind the Kit's machinery, for op.
func (k *Kit) Wrap(op string, h HandlerFunc, flags ...Flag) http.Handler {
	var fl Flag
	for _, f := range flags {
		fl |= f
	}
	k.mu.Lock()
	if !slices.Contains(k.ops, op) {
		k.ops = append(k.ops, op)
	}
	k.mu.Unlock()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := k.serve(w, r, op, h, fl)
		if status == statusReset {
			// Logged first: a client that sees the connection close finds
			// its request in the log.
			k.log(r, op, 0)
			ResetConnection(w)
			return
		}
		k.log(r, op, status)
	})
}

func (k *Kit) serve(w http.ResponseWriter, r *http.Request, op string, h HandlerFunc, fl Flag) int {
	k.mu.Lock()
	k.served++
	k.stats[op]++
	f, faulted := k.pickFault(op)
	delay := k.latency
	if faulted {
		delay += f.Delay
	}
	k.mu.Unlock()

	// The body is read before the delay: Go's server notices a client
	// that hangs up only once the body is read, and a delayed request of
	// a client gone must end at once.
	bodyErr := BufferBody(r, k.opts.MaxBodyBytes)
	if !Sleep(r, delay) {
		return 0 // the client went away
	}
	if delay > 0 {
		k.mu.Lock()
		k.injected += delay
		k.mu.Unlock()
	}
	if faulted {
		if status, done := k.apply(f, w, r, op); done {
			return status
		}
		if mutate := f.mutation(); mutate != nil {
			mw := &mutatingWriter{ResponseWriter: w, mutate: mutate}
			defer mw.flush()
			w = mw
		}
	}
	if fl&NoAuth == 0 && k.opts.Auth != nil {
		if resp := k.opts.Auth(r); resp != nil {
			return k.write(w, r, op, *resp)
		}
	}
	if bodyErr != nil {
		return k.write(w, r, op, k.Error(r, op, http.StatusRequestEntityTooLarge, bodyErr.Error()))
	}
	resp := k.run(h, r)
	ok := resp.Status >= 200 && resp.Status < 300 || k.opts.WritesAnyStatus
	if ok && fl&NoWrite == 0 && !isRead(r.Method) {
		k.mu.Lock()
		k.writes++
		k.mu.Unlock()
	}
	return k.write(w, r, op, resp)
}

// run calls h, holding Options.Lock if there is one.
func (k *Kit) run(h HandlerFunc, r *http.Request) Response {
	if k.opts.Lock != nil {
		k.opts.Lock.Lock()
		defer k.opts.Lock.Unlock()
	}
	return h(r)
}

// write sends resp, after Options.Respond.
func (k *Kit) write(w http.ResponseWriter, r *http.Request, op string, resp Response) int {
	if k.opts.Respond != nil {
		resp = k.opts.Respond(r, op, resp)
	}
	return Write(w, r, resp)
}

// Error is the answer for an error status, with the body Options.ErrorBody
// builds.
func (k *Kit) Error(r *http.Request, op string, status int, msg string) Response {
	return Response{Status: status, Body: k.opts.ErrorBody(r, ErrorInfo{Op: op, Status: status, Message: msg})}
}

func isRead(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// Write sends resp: its headers, then its body as JSON (none for HEAD),
// with Content-Type ContentType unless resp.Header has one. It returns the
// status sent.
func Write(w http.ResponseWriter, r *http.Request, resp Response) int {
	for name, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(name, v)
		}
	}
	if resp.Status == 0 {
		resp.Status = http.StatusOK
	}
	if r != nil && r.Method == http.MethodHead {
		if resp.Body != nil && w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", ContentType)
		}
		w.WriteHeader(resp.Status)
		return resp.Status
	}
	WriteJSON(w, resp.Status, resp.Body)
	return resp.Status
}

// OpName is the operation's path part: "GET /v2/things/{id}" ->
// "/v2/things/{id}".
func OpName(op string) string {
	if _, path, ok := strings.Cut(op, " "); ok {
		return path
	}
	return op
}
