package openstacksim

// StandardAttributes are what Neutron keeps of every resource alike (its
// standard-attr-revisions and standard-attr-timestamp extensions), with
// the resource's project. A resource's JSON holds them at its top level.
type StandardAttributes struct {
	ProjectID      string `json:"project_id"`
	TenantID       string `json:"tenant_id"`
	RevisionNumber int    `json:"revision_number"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
}

// newStandardAttributes are the attributes of a resource of project
// created now, at revision.
func newStandardAttributes(projectID string, revision int) StandardAttributes {
	return StandardAttributes{ProjectID: projectID, TenantID: projectID, RevisionNumber: revision, CreatedAt: createdTS, UpdatedAt: createdTS}
}

// revise records a change to the resource: the next revision, updated
// now.
func (a *StandardAttributes) revise() {
	a.RevisionNumber++
	a.UpdatedAt = updatedTS
}

// TaggedAttributes are the standard attributes of the resources the
// standard-attr-tag extension tags: networks, subnets, ports, routers,
// floating IPs and security groups.
type TaggedAttributes struct {
	Tags []string `json:"tags"`
	StandardAttributes
}

// newTaggedAttributes are the attributes of a resource of project
// created now with tags.
func newTaggedAttributes(tags []string, projectID string) TaggedAttributes {
	return TaggedAttributes{Tags: nonNil(tags), StandardAttributes: newStandardAttributes(projectID, 1)}
}

func (a *TaggedAttributes) tagged() *TaggedAttributes { return a }
