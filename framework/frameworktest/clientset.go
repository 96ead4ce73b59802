package frameworktest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// NewClientset is fake.NewClientset whose watches deliver copies of the
// objects it holds, as an API server's do: tests that start
// framework.NewCloud with informers on a fake clientset use it.
//
// The framework's informers trim each object in place before caching it
// (framework/memory.go), which client-go allows for objects fresh off the
// wire. The fake's object tracker, though, hands a watch that starts
// after its list the objects it stored in between as they are (client-go
// v0.37.1, testing/fixture.go, tracker.Watch: fakewatcher.Add(obj.Object)),
// so a trim there writes the tracker's own object while the test reads it:
// a data race the race detector reports, and a stored object without its
// managedFields.
func NewClientset(objects ...runtime.Object) *fake.Clientset {
	c := fake.NewClientset(objects...)
	c.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := c.Tracker().Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, copying(w), nil
	})
	return c
}

// copying relays in's events with a deep copy of each object, until in
// ends or the returned watch is stopped.
func copying(in watch.Interface) watch.Interface {
	events := make(chan watch.Event)
	out := watch.NewProxyWatcher(events)
	go func() {
		defer close(events)
		defer in.Stop()
		for {
			select {
			case <-out.StopChan():
				return
			case e, ok := <-in.ResultChan():
				if !ok {
					return
				}
				if e.Object != nil {
					e.Object = e.Object.DeepCopyObject()
				}
				select {
				case events <- e:
				case <-out.StopChan():
					return
				}
			}
		}
	}()
	return out
}
