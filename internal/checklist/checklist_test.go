package checklist

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// guide is the checklist's file, relative to the module root.
const guide = "docs/writing-a-provider.md"

// template is the name of the template provider, which lives in
// examples/skeleton rather than providers/skeleton.
const template = "skeleton"

// TestEveryCloudHasEveryPlace checks, for every cloud, each place of the
// checklist: it exists (unless optional), holds the files it must, makes
// the kit calls it must, or, for a registry, names the cloud.
func TestEveryCloudHasEveryPlace(t *testing.T) {
	root := moduleRoot(t)
	for _, cloud := range clouds(t, root) {
		t.Run(cloud.name, func(t *testing.T) {
			for _, p := range places {
				if p.notTemplate && cloud.name == template {
					continue
				}
				checkPlace(t, root, cloud, p)
			}
		})
	}
}

// TestNothingOutsideTheChecklist walks the tree: a file whose path names a
// cloud (charts/<cloud>-cloud-controller-manager/..., examples/cloudsim/<cloud>.yaml)
// must be in the cloud's own directory or at a place of the checklist.
func TestNothingOutsideTheChecklist(t *testing.T) {
	root := moduleRoot(t)
	cs := clouds(t, root)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if rel == ".git" || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		for _, c := range cs {
			if !strings.Contains(rel, c.name) || strings.HasPrefix(rel, c.dir+"/") {
				continue
			}
			if !slices.ContainsFunc(places, func(p place) bool { return c.matches(p.path, rel) }) {
				t.Errorf("%s names %s, but is neither in %s/ nor at a place of %s's checklist: add the place to the checklist (and to places_test.go)", rel, c.name, c.dir, guide)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChecklistIsTheGuides checks that the guide's checklist table and
// places name the same places, and that each row names its files and kit
// calls: the guide a newcomer follows is what this test holds the tree
// to.
func TestChecklistIsTheGuides(t *testing.T) {
	rows := checklistRows(t, filepath.Join(moduleRoot(t), guide))
	for _, p := range places {
		row, ok := rows[p.path]
		if !ok {
			t.Errorf("%s's checklist has no row for %s", guide, p.path)
			continue
		}
		var want []string
		want = append(want, p.files...)
		for _, u := range p.uses {
			want = append(want, strings.Split(u, "|")...)
		}
		for _, w := range want {
			if !strings.Contains(row, "`"+w) {
				t.Errorf("%s's checklist row for %s does not name `%s`", guide, p.path, w)
			}
		}
		if p.optional != strings.Contains(row, "(optional") {
			t.Errorf("%s's checklist row for %s: optional is %v here, and the row should say \"(optional...\" exactly then", guide, p.path, p.optional)
		}
		if p.notTemplate != strings.Contains(row, "(not the template") {
			t.Errorf("%s's checklist row for %s: not-the-template is %v here, and the row should say \"(not the template...\" exactly then", guide, p.path, p.notTemplate)
		}
		delete(rows, p.path)
	}
	for path := range rows {
		t.Errorf("%s's checklist has a row for %s, which places_test.go does not list", guide, path)
	}
}

// cloud is one provider of internal/cluster.Providers as the checklist
// sees it.
type cloud struct {
	name string
	// dir is its directory: providers/<name>, or examples/skeleton.
	dir string
	// sim is its simulator's package, a directory of dir.
	sim string
}

// clouds are every provider of internal/cluster.Providers. It fails the
// test when a directory of providers/ is not among them.
func clouds(t *testing.T, root string) []cloud {
	t.Helper()
	var out []cloud
	for _, p := range cluster.Providers {
		c := cloud{name: p.Name, dir: "providers/" + p.Name}
		if p.Name == template {
			c.dir = "examples/skeleton"
		}
		entries, err := os.ReadDir(filepath.Join(root, c.dir))
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, e := range entries {
			if e.IsDir() && strings.HasSuffix(e.Name(), "sim") {
				if c.sim != "" {
					t.Fatalf("%s has two simulators: %s and %s", c.dir, c.sim, e.Name())
				}
				c.sim = e.Name()
			}
		}
		if c.sim == "" {
			t.Fatalf("%s has no simulator (a directory named <something>sim)", c.dir)
		}
		out = append(out, c)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "providers"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !slices.ContainsFunc(out, func(c cloud) bool { return c.name == d.Name() }) {
			t.Errorf("providers/%s is not in internal/cluster.Providers", d.Name())
		}
	}
	return out
}

// resolve writes a place's path for c.
func (c cloud) resolve(path string) string {
	path = strings.ReplaceAll(path, "providers/<cloud>/", c.dir+"/")
	path = strings.ReplaceAll(path, "<sim>", c.sim)
	return strings.ReplaceAll(path, "<cloud>", c.name)
}

// matches reports whether the file rel is at the place path of c.
func (c cloud) matches(path, rel string) bool {
	p := c.resolve(path)
	switch {
	case strings.HasSuffix(p, "/"):
		return strings.HasPrefix(rel, p)
	case strings.Contains(p, "*"):
		ok, _ := filepath.Match(p, rel)
		return ok
	default:
		return rel == p
	}
}

// checkPlace checks one place of c.
func checkPlace(t *testing.T, root string, c cloud, p place) {
	t.Helper()
	rel := c.resolve(p.path)
	found, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(rel, "/"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		if !p.optional {
			t.Errorf("%s: missing (%s's checklist: %s)", rel, guide, p.path)
		}
		return
	}
	for _, f := range p.files {
		if _, err := os.Stat(filepath.Join(root, rel, f)); err != nil {
			t.Errorf("%s: no %s (%s's checklist: %s)", rel, f, guide, p.path)
		}
	}
	src := sources(t, found)
	for _, use := range p.uses {
		if used(src, use) {
			if why, ok := gaps[c.name+" "+use]; ok {
				t.Errorf("%s now calls %s: take the gap (%q) off places_test.go's gaps", rel, use, why)
			}
			continue
		}
		if why, ok := gaps[c.name+" "+use]; ok {
			t.Logf("%s: no %s yet: %s", rel, use, why)
			continue
		}
		t.Errorf("%s: calls no %s (%s's checklist: %s)", rel, strings.ReplaceAll(use, "|", " or "), guide, p.path)
	}
	if p.registry && !strings.Contains(strings.ToLower(src), c.name) {
		t.Errorf("%s does not name %s (%s's checklist: every cloud is listed there)", rel, c.name, guide)
	}
}

// sources returns the text of the files at paths, and of the Go files of
// the directories among them.
func sources(t *testing.T, paths []string) string {
	t.Helper()
	var b strings.Builder
	for _, path := range paths {
		files := []string{path}
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			files, _ = filepath.Glob(filepath.Join(path, "*.go"))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// used reports whether src calls one of use's alternatives ("a|b"): the
// qualified name followed by a call or type arguments.
func used(src, use string) bool {
	for _, name := range strings.Split(use, "|") {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `[(\[]`).MatchString(src) {
			return true
		}
	}
	return false
}

// checklistRows returns the rows of the checklist table in the guide, by
// the place in backticks that starts each row.
func checklistRows(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## 9. Checklist")
	if !ok {
		t.Fatalf("%s has no section \"## 9. Checklist\"", path)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	first := regexp.MustCompile("^\\| `([^`]+)`")
	for line := range strings.Lines(section) {
		m := first.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("%s: two checklist rows for %s", path, m[1])
		}
		rows[m[1]] = line
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows in the checklist table", path)
	}
	return rows
}

// moduleRoot finds the module root from the test's working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}
