package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/go-logr/logr"
)

const (
	callerToken = "eyJhbGciOiJSUzI1NiJ9.caller-token-do-not-log"
	secretValue = "cloud-api-key-do-not-log"
)

// fakeAPIServer answers a TokenReview (echoing the token, as the API server
// does), a Secret, a SecretList and a ConfigMap, in JSON.
func fakeAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var obj any
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			obj = &authenticationv1.TokenReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
				Spec:     authenticationv1.TokenReviewSpec{Token: callerToken},
				Status:   authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "system:serviceaccount:monitoring:prometheus"}},
			}
		case "/api/v1/namespaces/kube-system/secrets/cloud":
			obj = &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: "kube-system"},
				Data:       map[string][]byte{"token": []byte(secretValue)},
				StringData: map[string]string{"password": secretValue},
			}
		case "/api/v1/namespaces/kube-system/secrets":
			obj = map[string]any{"kind": "SecretList", "apiVersion": "v1", "items": []any{
				map[string]any{"metadata": map[string]any{"name": "cloud"}, "stringData": map[string]any{"password": secretValue}},
			}}
		case "/api/v1/namespaces/kube-system/configmaps/settings":
			obj = &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "kube-system"},
				Data:       map[string]string{"region": "fra1", "note": "refers to the Secret cloud"},
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(obj)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// loggedCalls makes the calls through a real client-go clientset whose
// logger is a -v=10 text logger wrapped by newRedactingSink, and returns
// the log.
func loggedCalls(t *testing.T, contentType string) string {
	t.Helper()
	var out bytes.Buffer
	base := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&out)))
	ctx := klog.NewContext(context.Background(), logr.New(newRedactingSink(base.GetSink())))

	cfg := &rest.Config{Host: fakeAPIServer(t).URL, ContentConfig: rest.ContentConfig{ContentType: contentType}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: callerToken}}
	if _, err := client.AuthenticationV1().TokenReviews().Create(ctx, review, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets("kube-system").Get(ctx, "cloud", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, "settings", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	klog.FromContext(ctx).Info("Done")
	return out.String()
}

// At -v=10 client-go logs every request and response body; the
// credentials in them are redacted and the rest is still there.
func TestRedactingSinkKeepsCredentialsOutOfClientGoBodies(t *testing.T) {
	for _, ct := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(ct, func(t *testing.T) {
			log := loggedCalls(t, ct)
			for _, secret := range []string{callerToken, secretValue} {
				if strings.Contains(log, secret) {
					t.Errorf("the log holds %q:\n%s", secret, log)
				}
			}
			for _, want := range []string{
				`"Request Body"`, `"Response Body"`,
				`\"kind\":\"TokenReview\"`,                    // the answer, redacted field by field
				`system:serviceaccount:monitoring:prometheus`, // who the caller is stays
				`"region":"fra1"`,                             // a body with no credential is untouched
				`refers to the Secret cloud`,                  // even when it mentions a Secret
				"logredact_test.go",                           // entries name their caller, not the wrapper
			} {
				if !strings.Contains(log, want) {
					t.Errorf("the log lacks %s:\n%s", want, log)
				}
			}
		})
	}
}

func TestRedactBody(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		changed    bool
		want       string // substring of the result
	}{
		{"no credential kind", `{"kind":"Node","metadata":{"name":"n1"}}`, false, `"n1"`},
		{"token review", `{"kind":"TokenReview","spec":{"token":"abc"}}`, true, `"token":"[redacted]"`},
		{"token request answer", `{"kind":"TokenRequest","status":{"token":"abc","expirationTimestamp":null}}`, true, `"token":"[redacted]"`},
		{"truncated JSON", `{"kind":"TokenReview","spec":{"token":"abc [truncated 40 chars]`, true, "[redacted] ("},
		{"list of kinds", `{"kind":"List","items":[{"kind":"Secret","data":{"k":"djE="}},{"kind":"Node"}]}`, true, `"k":"[redacted]"`},
		{"pod naming a secret", `{"kind":"Pod","spec":{"imagePullSecrets":[{"name":"Secret"}]}}`, false, `"Secret"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := redactBody(tc.body)
			if changed != tc.changed || !strings.Contains(got, tc.want) || (tc.changed && strings.Contains(got, "abc")) {
				t.Errorf("redactBody(%s) = %s, %v; want changed=%v and %q in it", tc.body, got, changed, tc.changed, tc.want)
			}
		})
	}
}

// klog's own logger (contextual logging off) redacts through the filter.
func TestBodyFilter(t *testing.T) {
	msg, kvs := bodyFilter{}.FilterS("Request Body", []any{"body", `{"kind":"TokenReview","spec":{"token":"abc"}}`})
	if msg != "Request Body" || len(kvs) != 2 || strings.Contains(kvs[1].(string), "abc") {
		t.Errorf("FilterS = %q, %v", msg, kvs)
	}
	orig := []any{"body", `{"kind":"Secret","data":{"k":"djE="}}`}
	if _, kvs := (bodyFilter{}).FilterS("Something else", orig); kvs[1] != orig[1] {
		t.Errorf("a message other than a body changed: %v", kvs)
	}
}
