package tritonsim

import (
	"net/http"
	"testing"
	"time"

	"github.com/joyent/triton-go/compute"
)

func TestTags(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	s, c := setup(t, Options{Now: func() time.Time { return now }})
	m := s.AddMachine(Machine{Tags: map[string]any{"owner": "me"}})
	inst := c.compute.Instances()
	now = now.Add(time.Minute)

	if err := inst.AddTags(ctx(), &compute.AddTagsInput{ID: m.ID, Tags: map[string]string{
		"k8s-cluster": "c1", TagCNSServices: "k8s-c1-nodes:30080,web",
	}}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Machine(m.ID)
	if len(got.Tags) != 3 || got.Tags["owner"] != "me" || !got.Updated.Equal(now) {
		t.Fatalf("after merge: %v, updated %v", got.Tags, got.Updated)
	}
	if v, err := inst.GetTag(ctx(), &compute.GetTagInput{ID: m.ID, Key: "k8s-cluster"}); err != nil || v != "c1" {
		t.Fatalf("GetTag = %q, %v", v, err)
	}
	inst2, err := inst.Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	if err != nil || len(inst2.CNS.Services) != 2 || inst2.CNS.Services[0] != "k8s-c1-nodes:30080" {
		t.Fatalf("CNS services %+v, %v", inst2.CNS, err)
	}

	if err := inst.ReplaceTags(ctx(), &compute.ReplaceTagsInput{ID: m.ID, Tags: map[string]string{"a": "b"},
		CNS: compute.InstanceCNS{Disable: true}}); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Machine(m.ID); len(got.Tags) != 2 || got.Tags[TagCNSDisable] != true {
		t.Fatalf("after replace: %v", got.Tags)
	}
	if err := inst.DeleteTag(ctx(), &compute.DeleteTagInput{ID: m.ID, Key: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := inst.DeleteTags(ctx(), &compute.DeleteTagsInput{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Machine(m.ID); len(got.Tags) != 0 {
		t.Fatalf("after delete all: %v", got.Tags)
	}
}

func TestTagsRefused(t *testing.T) {
	s, c := setup(t, Options{})
	m := s.AddMachine(Machine{Tags: map[string]any{"keep": "me"}})
	for _, tags := range []map[string]string{
		{"triton.foo": "x"},
		{TagCNSDisable: "true"}, // a string, not a boolean
		{TagCNSServices: "Web"},
		{TagCNSServices: "web:99999"},
		{TagCNSServices: "web:8080:colour=blue"},
		{TagCNSServices: ""},
		{"triton.cmon.groups": "a b"},
	} {
		err := c.compute.Instances().AddTags(ctx(), &compute.AddTagsInput{ID: m.ID, Tags: tags})
		wantAPIError(t, err, http.StatusConflict, "ValidationFailed")
	}
	if got, _ := s.Machine(m.ID); len(got.Tags) != 1 || got.Tags["keep"] != "me" {
		t.Fatalf("a refused write changed the tags: %v", got.Tags)
	}
	for _, ok := range []string{"web", "web:8080,web:8443,admin", "web:port=8080", "web:8080:priority=20:weight=20"} {
		if err := parseServicesErr(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func parseServicesErr(v string) error {
	_, err := parseServices(v)
	return err
}

func TestMetadata(t *testing.T) {
	s, c := setup(t, Options{})
	m := s.AddMachine(Machine{})
	inst := c.compute.Instances()
	all, err := inst.UpdateMetadata(ctx(), &compute.UpdateMetadataInput{ID: m.ID, Metadata: map[string]string{
		MetadataLoadBalancer: "true", MetadataPortmap: "tcp://80:web:30080",
	}})
	if err != nil || len(all) != 2 {
		t.Fatalf("UpdateMetadata = %v, %v", all, err)
	}
	if v, err := inst.GetMetadata(ctx(), &compute.GetMetadataInput{ID: m.ID, Key: MetadataPortmap}); err != nil || v != "tcp://80:web:30080" {
		t.Fatalf("GetMetadata = %q, %v", v, err)
	}
	if err := inst.DeleteMetadata(ctx(), &compute.DeleteMetadataInput{ID: m.ID, Key: MetadataPortmap}); err != nil {
		t.Fatal(err)
	}
	if all, err = inst.ListMetadata(ctx(), &compute.ListMetadataInput{ID: m.ID}); err != nil || len(all) != 1 {
		t.Fatalf("ListMetadata = %v, %v", all, err)
	}
	_, err = inst.GetMetadata(ctx(), &compute.GetMetadataInput{ID: m.ID, Key: MetadataPortmap})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
	if err := inst.DeleteAllMetadata(ctx(), &compute.DeleteAllMetadataInput{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Machine(m.ID); len(got.Metadata) != 0 {
		t.Fatalf("after delete all: %v", got.Metadata)
	}
}
