package openstacksim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cinder, the Block Storage API v3, as Cinder 2022.2 (Zed) serves it to a
// project member: microversions 3.0 … 3.70, volumes, snapshots, volume
// types, availability zones, limits and quota sets under
// /volume/v3/{project_id}, the project of the token (another is 400
// "Malformed request url", as Cinder's wsgi layer answers). Sources:
// cinder/api/v3 (controllers and views), cinder/volume/api.py (the state
// checks and their messages), cinder/api/openstack/wsgi.py (microversion
// negotiation, faults) and the api-ref.

// Cinder's path prefixes and microversion range.
const (
	volumePrefix  = "/volume"
	volumeV3      = volumePrefix + "/v3"
	volumeProject = volumeV3 + "/{project}"
	// cinderMaxMinor is the newest microversion Cinder's answers are
	// shaped for; Options.CinderMinor may serve fewer.
	cinderMaxMinor = DefaultCinderMinor
	// cinderUpdated is the "updated" of Cinder's v3.0 version entry
	// (cinder/api/openstack/api_version_request.py UPDATED).
	cinderUpdated = "2022-08-31T00:00:00Z"
)

// cinderHandlerFunc serves a Cinder endpoint for a microversion (minor of
// 3.x; 0 when the client asks for none).
type cinderHandlerFunc func(r *http.Request, minor int) response

func (s *Server) cinderRoutes() {
	for _, p := range []string{volumePrefix, volumePrefix + "/{$}"} {
		s.Handle("GET "+p, s.volumeVersions(http.StatusMultipleChoices), simkit.NoAuth)
	}
	for _, p := range []string{volumeV3, volumeV3 + "/{$}"} {
		s.Handle("GET "+p, s.volumeVersions(http.StatusOK), simkit.NoAuth)
	}
	s.volumeRoutes()
	s.snapshotRoutes()
	s.volumeTypeRoutes()
	p := volumeProject
	s.cinderHandle("GET "+p+"/os-availability-zone", s.volumeZones)
	s.cinderHandle("GET "+p+"/limits", s.volumeLimits)
	s.cinderHandle("GET "+p+"/os-quota-sets/{target}", s.volumeQuotaSet(false))
	s.cinderHandle("GET "+p+"/os-quota-sets/{target}/defaults", s.volumeQuotaSet(true))
	s.HandleFunc(volumeV3+"/", s.withoutProjectID)
}

// cinderCollections are the resources Cinder also serves without a
// project ID in the URL.
var cinderCollections = []string{"volumes", "snapshots", "types", "os-availability-zone", "limits", "os-quota-sets"}

// withoutProjectID serves /volume/v3/<resource>…: since 3.67 Cinder
// takes URLs without the project ID, whatever microversion a request
// asks for, and uses the token's project (the api-ref's "project_id is
// optional"). It serves them as the same URL with the token's project,
// so Stats and faults see one endpoint; any other path is 404.
func (s *Server) withoutProjectID(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, volumeV3+"/")
	first, _, _ := strings.Cut(rest, "/")
	if !slices.Contains(cinderCollections, first) {
		simkit.Write(w, r, notFoundAnswer(r))
		return
	}
	s.mu.Lock()
	project := s.opts.Users[0].ProjectID
	if t := s.tokens[r.Header.Get("X-Auth-Token")]; t != nil {
		project = t.user.ProjectID
	}
	s.mu.Unlock()
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = volumeV3+"/"+project+"/"+rest, ""
	s.Handler().ServeHTTP(w, r2)
}

// cinderHandle registers a Cinder endpoint behind microversion
// negotiation (OpenStack-API-Version: volume 3.x or latest; none is 3.0;
// 400 for a version that does not parse, 406 out of range) and the
// project check, echoing the version served in OpenStack-API-Version with
// Vary, as cinder/api/openstack/wsgi.py does.
func (s *Server) cinderHandle(op string, h cinderHandlerFunc) {
	s.Handle(op, func(r *http.Request) response {
		minor, err := cinderMicroversion(r, s.opts.CinderMinor)
		var resp response
		switch {
		case err != nil:
			resp = novaError(err.status, "%s", err.msg)
		case r.PathValue("project") != s.tokenProject(r):
			resp = novaError(http.StatusBadRequest, "Malformed request url")
		default:
			resp = h(r, minor)
		}
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		if err == nil {
			resp.Header.Set("Openstack-Api-Version", "volume 3."+strconv.Itoa(minor))
			resp.Header.Set("Vary", "OpenStack-API-Version")
		}
		return resp
	})
}

// cinderMicroversion is the request's Cinder microversion. Cinder reads
// only OpenStack-API-Version; a header naming no volume version is 404
// (VersionNotFoundForAPIMethod).
func cinderMicroversion(r *http.Request, maxMinor int) (int, *microversionError) {
	hs := r.Header.Values("OpenStack-API-Version")
	if len(hs) == 0 {
		return 0, nil
	}
	v := ""
	for part := range strings.SplitSeq(strings.Join(hs, ","), ",") {
		if svc, ver, ok := strings.Cut(strings.TrimSpace(part), " "); ok && strings.EqualFold(svc, "volume") {
			v = strings.TrimSpace(ver)
			break
		}
	}
	switch strings.ToLower(v) {
	case "":
		return 0, &microversionError{http.StatusNotFound, "API version None is not supported on this method."}
	case "latest":
		return maxMinor, nil
	}
	m := versionPattern.FindStringSubmatch(v)
	if m == nil {
		return 0, &microversionError{http.StatusBadRequest, fmt.Sprintf("API Version String %s is of invalid format. Must be of format MajorNum.MinorNum.", v)}
	}
	if m[1] != "3" || atoi(m[2]) > maxMinor {
		return 0, &microversionError{http.StatusNotAcceptable, fmt.Sprintf("Version %s is not supported by the API. Minimum is 3.0 and maximum is 3.%d.", v, maxMinor)}
	}
	return atoi(m[2]), nil
}

// volumeVersions is Cinder's version document: 300 at the root, 200 at
// /v3/, one entry (v3.0, CURRENT) linking to /v3/, the base clients add
// the project and resource paths to (cinder/api/versions.py).
func (s *Server) volumeVersions(status int) simkit.HandlerFunc {
	return func(r *http.Request) response {
		return simkit.JSON(status, map[string]any{"versions": []any{map[string]any{
			"id": "v3.0", "status": "CURRENT", "version": "3." + strconv.Itoa(s.opts.CinderMinor), "min_version": "3.0", "updated": cinderUpdated,
			"links": []map[string]string{
				{"rel": "describedby", "type": "text/html", "href": "https://docs.openstack.org/"},
				{"rel": "self", "href": simkit.BaseURL(r) + volumeV3 + "/"},
			},
			"media-types": []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.volume+json;version=3"}},
		}}})
	}
}

// cinderError is a Cinder fault: the same envelope as Nova's
// ({"badRequest": {"code", "message"}}, cinder/api/openstack/wsgi.py
// Fault).
func cinderError(status int, format string, args ...any) response {
	return novaError(status, format, args...)
}

// cinderPolicyForbidden is Cinder's answer to a call the member's roles
// do not allow.
func cinderPolicyForbidden(rule string) response {
	return cinderError(http.StatusForbidden, "Policy doesn't allow %s to be performed.", rule)
}

// volumeZones is GET /os-availability-zone: Cinder's storage zones (see
// Options.VolumeZones), each available.
func (s *Server) volumeZones(*http.Request, int) response {
	out := []map[string]any{}
	for _, z := range s.volumeZoneNames() {
		out = append(out, map[string]any{"zoneName": z, "zoneState": map[string]bool{"available": true}})
	}
	return jsonOK(map[string]any{"availabilityZoneInfo": out})
}

// volumeZoneNames are the zones volumes may be created in.
func (s *Server) volumeZoneNames() []string {
	if len(s.opts.VolumeZones) > 0 {
		return s.opts.VolumeZones
	}
	zones := []string{"nova"}
	for _, v := range s.st.servers.All() {
		if !slices.Contains(zones, v.AZ) {
			zones = append(zones, v.AZ)
		}
	}
	return zones
}

// volumeUsage is what the token's project's volumes and snapshots use of
// its quotas.
type volumeUsage struct{ volumes, snapshots, gigabytes int }

func (s *Server) volumeUsage(project string) volumeUsage {
	var u volumeUsage
	for _, v := range s.st.volumes.All() {
		if v.project == project {
			u.volumes++
			u.gigabytes += v.Size
		}
	}
	for _, sn := range s.st.volSnapshots.All() {
		if sn.project == project {
			u.snapshots++
			u.gigabytes += sn.Size
		}
	}
	return u
}

// volumeLimits is GET /limits: the project's absolute limits (its quotas)
// and usage; no rate limits (cinder/api/v3/views/limits.py).
func (s *Server) volumeLimits(r *http.Request, _ int) response {
	q, u := s.opts.VolumeQuotas, s.volumeUsage(s.tokenProject(r))
	return jsonOK(map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": map[string]int{
		"maxTotalVolumes": q.Volumes, "maxTotalSnapshots": q.Snapshots, "maxTotalVolumeGigabytes": q.Gigabytes,
		"maxTotalBackups": cinderBackupQuota, "maxTotalBackupGigabytes": cinderBackupGigabytesQuota,
		"totalVolumesUsed": u.volumes, "totalSnapshotsUsed": u.snapshots, "totalGigabytesUsed": u.gigabytes,
		"totalBackupsUsed": 0, "totalBackupGigabytesUsed": 0,
	}}})
}

// Cinder's default quotas for what the simulator does not serve
// (backups, groups).
const (
	cinderBackupQuota          = 10
	cinderBackupGigabytesQuota = 1000
	cinderGroupQuota           = 10
)

// volumeQuotaSet is GET /os-quota-sets/{project} (?usage=true for
// {limit, in_use, reserved}) and …/defaults: the member's own project's
// quotas, with -1 for each volume type's (cinder/api/contrib/quotas.py);
// another project's is 403, the default policy being admin or owner.
func (s *Server) volumeQuotaSet(defaults bool) cinderHandlerFunc {
	return func(r *http.Request, _ int) response {
		target := r.PathValue("target")
		if !defaults && target != s.tokenProject(r) {
			return cinderPolicyForbidden("volume_extension:quotas:show")
		}
		q := s.opts.VolumeQuotas
		limits := map[string]int{
			"volumes": q.Volumes, "snapshots": q.Snapshots, "gigabytes": q.Gigabytes,
			"backups": cinderBackupQuota, "backup_gigabytes": cinderBackupGigabytesQuota,
			"per_volume_gigabytes": -1, "groups": cinderGroupQuota,
		}
		for _, vt := range s.volumeTypes() {
			for _, res := range []string{"volumes", "snapshots", "gigabytes"} {
				limits[res+"_"+vt.Name] = -1
			}
		}
		out := map[string]any{"id": target}
		usage := false
		if v := r.URL.Query().Get("usage"); v != "" && !defaults {
			usage, _ = strconv.ParseBool(strings.ToLower(v))
		}
		if !usage {
			for k, v := range limits {
				out[k] = v
			}
			return jsonOK(map[string]any{"quota_set": out})
		}
		used := s.volumeUsage(target)
		inUse := map[string]int{"volumes": used.volumes, "snapshots": used.snapshots, "gigabytes": used.gigabytes}
		for _, v := range s.st.volumes.All() {
			if v.project == target {
				inUse["volumes_"+v.VolumeType]++
				inUse["gigabytes_"+v.VolumeType] += v.Size
			}
		}
		for k, v := range limits {
			out[k] = map[string]int{"limit": v, "in_use": inUse[k], "reserved": 0}
		}
		return jsonOK(map[string]any{"quota_set": out})
	}
}

// overQuota is Cinder's 413 when a volume or snapshot of size GiB would
// pass a quota of project (cinder/quota_utils.py
// process_reserve_over_quota): the gigabytes quota first, then the count;
// nil when it fits. Cinder sends Retry-After: 0 with it.
func (s *Server) overQuota(project, resource string, size int) *response {
	q, u := s.opts.VolumeQuotas, s.volumeUsage(project)
	var resp response
	switch {
	case q.Gigabytes >= 0 && u.gigabytes+size > q.Gigabytes:
		resp = cinderError(http.StatusRequestEntityTooLarge,
			"Requested volume or snapshot exceeds allowed gigabytes quota. Requested %dG, quota is %dG and %dG has been consumed.",
			size, q.Gigabytes, u.gigabytes)
	case resource == "volumes" && q.Volumes >= 0 && u.volumes+1 > q.Volumes:
		resp = cinderError(http.StatusRequestEntityTooLarge, "Maximum number of volumes allowed (%d) exceeded for quota 'volumes'.", q.Volumes)
	case resource == "snapshots" && q.Snapshots >= 0 && u.snapshots+1 > q.Snapshots:
		resp = cinderError(http.StatusRequestEntityTooLarge, "Maximum number of snapshots allowed (%d) exceeded", q.Snapshots)
	default:
		return nil
	}
	resp.Header = http.Header{"Retry-After": {"0"}}
	if m, ok := resp.Body.(map[string]any); ok {
		if f, ok := m["overLimit"].(map[string]any); ok {
			f["retryAfter"] = "0"
		}
	}
	return &resp
}
