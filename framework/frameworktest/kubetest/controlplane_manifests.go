package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
)

// ApplyManifests creates, or updates when they exist, the objects in the
// given multi-document YAML (or JSON) files. It knows the kinds RBAC
// manifests hold: Namespace, ServiceAccount, ClusterRole,
// ClusterRoleBinding, Role and RoleBinding; any other kind is an error, so a
// typo cannot silently drop a rule.
func ApplyManifests(ctx context.Context, c kubernetes.Interface, files ...string) error {
	for _, f := range files {
		objs, err := decodeManifestFile(f)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if err := applyObject(ctx, c, obj); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return nil
}

func decodeManifestFile(path string) ([]runtime.Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return decodeManifests(f, path)
}

// decodeManifests splits a multi-document YAML stream and decodes each
// non-empty document with the client-go scheme.
func decodeManifests(r io.Reader, name string) ([]runtime.Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	deserializer := scheme.Codecs.UniversalDeserializer()
	var objs []runtime.Object
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading document %d: %w", name, i, err)
		}
		if isEmptyDocument(doc) {
			continue
		}
		obj, gvk, err := deserializer.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: decoding document %d: %w", name, i, err)
		}
		// Keep the kind for messages: typed objects may come back without it.
		obj.GetObjectKind().SetGroupVersionKind(*gvk)
		objs = append(objs, obj)
	}
}

// isEmptyDocument reports whether a YAML document holds only comments and
// blank lines.
func isEmptyDocument(doc []byte) bool {
	for line := range bytes.SplitSeq(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

func applyObject(ctx context.Context, c kubernetes.Interface, obj runtime.Object) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		err = createOrUpdate(ctx, o, c.CoreV1().Namespaces())
	case *corev1.ServiceAccount:
		err = createOrUpdate(ctx, o, c.CoreV1().ServiceAccounts(o.Namespace))
	case *rbacv1.ClusterRole:
		err = createOrUpdate(ctx, o, c.RbacV1().ClusterRoles())
	case *rbacv1.ClusterRoleBinding:
		err = createOrUpdate(ctx, o, c.RbacV1().ClusterRoleBindings())
	case *rbacv1.Role:
		err = createOrUpdate(ctx, o, c.RbacV1().Roles(o.Namespace))
	case *rbacv1.RoleBinding:
		err = createOrUpdate(ctx, o, c.RbacV1().RoleBindings(o.Namespace))
	default:
		return fmt.Errorf("unsupported kind %s", obj.GetObjectKind().GroupVersionKind().Kind)
	}
	return err
}

// object is what every typed API object is.
type object interface {
	runtime.Object
	metav1.Object
}

// typedClient is the part of a generated typed client createOrUpdate uses.
type typedClient[T object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

func createOrUpdate[T object](ctx context.Context, obj T, c typedClient[T]) error {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	ref := klog.KObj(obj)
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Created", "kind", kind, "object", ref)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", kind, ref, err)
	}
	current, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("getting %s %s: %w", kind, ref, err)
	}
	obj.SetResourceVersion(current.GetResourceVersion())
	if _, err := c.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating %s %s: %w", kind, ref, err)
	}
	klog.FromContext(ctx).V(2).Info("Updated", "kind", kind, "object", ref)
	return nil
}
