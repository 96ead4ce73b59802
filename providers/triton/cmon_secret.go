package triton

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// cmonManagedBy labels the Secret and the ConfigMap the metrics controller
// writes.
var cmonManagedBy = map[string]string{"app.kubernetes.io/managed-by": "triton-cloud-controller-manager", "app.kubernetes.io/component": CMONControllerName}

// ensureCert keeps a serving certificate in the Secret: it reads the
// Secret (one GET; the controller may read Secrets in its namespace only,
// so it lists none), and writes a new certificate only when the Secret is
// missing or its certificate no longer serves (checkCMONCert). It returns
// the expiry of the certificate the Secret holds afterwards.
func (c *cmonController) ensureCert(ctx context.Context) (time.Time, error) {
	k, err := c.signer.Current()
	if err != nil {
		return time.Time{}, fmt.Errorf("the account key: %w", err)
	}
	s := &c.settings
	secrets := c.kube.CoreV1().Secrets(s.Namespace)
	now := c.now()
	cur, err := secrets.Get(ctx, s.Secret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cur = nil
	case err != nil:
		return time.Time{}, fmt.Errorf("reading Secret %s/%s: %w", s.Namespace, s.Secret, err)
	case cur.Type != corev1.SecretTypeTLS:
		return time.Time{}, fmt.Errorf("the Secret %s/%s %w", s.Namespace, s.Secret, errCMONSecretType)
	default:
		v := checkCMONCert(cur.Data[corev1.TLSCertKey], cur.Data[corev1.TLSPrivateKeyKey], k, c.login, now, s.CertValidity, s.RenewBefore)
		if v.renew == "" {
			return v.notAfter, nil
		}
		klog.FromContext(ctx).Info("Renewing CMON's client certificate", "secret", klog.KObj(cur), "reason", v.renew)
	}
	pair, err := mintCMONCert(k, c.login, now, s.CertValidity)
	if err != nil {
		return time.Time{}, err
	}
	notAfter := now.Add(s.CertValidity).Truncate(time.Second)
	data := map[string][]byte{corev1.TLSCertKey: pair.cert, corev1.TLSPrivateKeyKey: pair.key}
	if cur == nil {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: s.Secret, Namespace: s.Namespace, Labels: maps.Clone(cmonManagedBy)},
			Type:       corev1.SecretTypeTLS,
			Data:       data,
		}
		if _, err := secrets.Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			return time.Time{}, fmt.Errorf("creating Secret %s/%s: %w", s.Namespace, s.Secret, err)
		}
		klog.FromContext(ctx).Info("Created CMON's client certificate", "secret", klog.KRef(s.Namespace, s.Secret), "notAfter", notAfter)
		return notAfter, nil
	}
	next := cur.DeepCopy()
	if next.Data == nil {
		next.Data = map[string][]byte{}
	}
	maps.Copy(next.Data, data) // other keys (a user's ca.crt) stay
	if _, err := secrets.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return time.Time{}, fmt.Errorf("updating Secret %s/%s: %w", s.Namespace, s.Secret, err)
	}
	klog.FromContext(ctx).Info("Renewed CMON's client certificate", "secret", klog.KObj(cur), "notAfter", notAfter)
	return notAfter, nil
}
