package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaDir is docs/json in the repository.
func schemaDir(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "docs", "json")
}

// compileSchema compiles docs/json/<name>.schema.json (its $refs resolve to the
// files beside it).
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile(filepath.Join(schemaDir(t), name+".schema.json"))
	require.NoError(t, err, name)
	return s
}

// checkDoc validates one JSON document against the command's schema, or against
// the error schema when it is the generic error document.
func checkDoc(t *testing.T, command, doc string) map[string]any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	require.NoError(t, err, "not JSON: %q", doc)
	m, ok := inst.(map[string]any)
	require.True(t, ok, "not an object: %q", doc)
	assert.Equal(t, "2.0", m["format_version"])
	name := command
	generic := true // only the members of the generic error document
	for k := range m {
		if k != "format_version" && k != "error" && k != "diagnostics" {
			generic = false
		}
	}
	if _, hasErr := m["error"]; hasErr && generic {
		name = "error"
	}
	if err := compileSchema(t, name).Validate(inst); err != nil {
		t.Errorf("%s -json does not match docs/json/%s.schema.json: %v\n%s", command, name, err, doc)
	}
	assert.NotContains(t, doc, "0001-01-01", "absent times are omitted")
	assert.NotContains(t, doc, "_ns\"", "durations are _ms")
	return m
}

// Every -json document of every command matches its published schema: success and
// failure, as scripts see them.
func TestJSONDocumentsMatchTheirSchemas(t *testing.T) {
	e := newEnv(t)
	r := e.run("acquire", "j", "-json", "-ttl", "5s")
	require.Equal(t, 0, r.code, r.stderr)
	acq := checkDoc(t, "acquire", r.stdout)
	token, _ := acq["token"].(string)
	require.NotEmpty(t, token)

	r = e.run("acquire", "j", "-json", "-wait", "0")
	assert.Equal(t, 3, r.code)
	checkDoc(t, "acquire", r.stdout)

	r = e.run("extend", "j", "-json", "-token", token)
	assert.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "extend", r.stdout)
	r = e.run("extend", "j", "-json", "-token", "rl1.not-mine.x")
	assert.Equal(t, 4, r.code)
	checkDoc(t, "extend", r.stdout)

	r = e.run("locks", "-json")
	assert.Equal(t, 0, r.code, r.stderr)
	lk := checkDoc(t, "locks", r.stdout)
	assert.Len(t, lk["locks"], 1)

	r = e.run("nodes", "-json")
	assert.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "nodes", r.stdout)

	r = e.run("plan", "-json")
	checkDoc(t, "plan", r.stdout)

	r = e.run("validate", "-json")
	assert.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "validate", r.stdout)

	r = e.run("release", "j", "-json", "-token", token)
	assert.Equal(t, 0, r.code, r.stderr)
	rel := checkDoc(t, "release", r.stdout)
	assert.Contains(t, rel, "votes", "the same votes shape as acquire and extend")

	e.acquireToken("j")
	r = e.run("force-expire", "j", "-yes", "-json")
	assert.Equal(t, 6, r.code, r.stderr)
	fe := checkDoc(t, "force-expire", r.stdout)
	assert.Equal(t, "revoked", fe["action"])
	assert.NotEmpty(t, fe["free_at"])
	r = e.run("locks", "-json")
	assert.Equal(t, 0, r.code, r.stderr)
	lk = checkDoc(t, "locks", r.stdout)
	require.Len(t, lk["locks"], 1)
	assert.Equal(t, "revoked", lk["locks"].([]any)[0].(map[string]any)["state"])
	assert.NotEmpty(t, lk["locks"].([]any)[0].(map[string]any)["free_at"])
	r = e.run("force-expire", "j", "-yes", "-json", "-now")
	assert.Equal(t, 0, r.code, r.stderr)
	fe = checkDoc(t, "force-expire", r.stdout)
	assert.Equal(t, "deleted", fe["action"])

	// watch: JSON lines.
	cmd := e.command("", "watch", "-interval", "100ms", "-json")
	var out syncBuffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= 2 }, 10*time.Second, 20*time.Millisecond)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if sc.Text() != "" {
			checkDoc(t, "watch", sc.Text())
		}
	}

	r = e.run("version", "-json")
	assert.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "version", r.stdout)

	r = e.run("bench", "-clients", "2", "-ops", "3", "-json")
	assert.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "bench", r.stdout)

	// A bad command line under -json: one document on stdout too.
	for _, args := range [][]string{{"acquire"}, {"acquire", "j", "-ttl", "5"}, {"release", "j"}, {"locks", "extra"}, {"nodes", "-bogus"}, {"version", "extra"}} {
		r = e.run(append(args, "-json")...)
		assert.NotEqual(t, 0, r.code, "%v", args)
		doc := checkDoc(t, args[0], r.stdout)
		assert.NotEmpty(t, doc["error"], "%v", args)
	}

	// A broken file: still one JSON document on stdout, with the diagnostics.
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	require.NoError(t, os.WriteFile(bad, []byte("cluster \"x\" {\n  ttl = \"30\"\n}\n"), 0o600))
	for _, args := range [][]string{{"acquire", "j"}, {"locks"}, {"plan"}, {"nodes"}, {"release", "j", "-token", "t"}} {
		r = e.run(append(args, "-json", "-config", bad)...)
		assert.NotEqual(t, 0, r.code)
		doc := checkDoc(t, args[0], r.stdout)
		assert.Contains(t, doc["error"], "bad.hcl", "%v", args)
		assert.IsType(t, []any{}, doc["diagnostics"], "the diagnostics are a list: %v", args)
	}
	r = e.run("validate", "-json", "-config", bad)
	assert.Equal(t, 2, r.code)
	v := checkDoc(t, "validate", r.stdout)
	assert.Equal(t, false, v["valid"])
}

// One unit rule: every duration in every document is a decimal number of
// milliseconds in a field named *_ms; no other unit appears.
func TestSchemasOneDurationUnit(t *testing.T) {
	entries, err := os.ReadDir(schemaDir(t))
	require.NoError(t, err)
	var walk func(file string, node any)
	walk = func(file string, node any) {
		switch n := node.(type) {
		case map[string]any:
			if props, ok := n["properties"].(map[string]any); ok {
				for name, p := range props {
					for _, bad := range []string{"_ns", "_us", "_seconds", "_s"} {
						assert.False(t, strings.HasSuffix(name, bad), "%s: %s: durations are _ms", file, name)
					}
					if strings.HasSuffix(name, "_ms") {
						pm, _ := p.(map[string]any)
						if ref, ok := pm["$ref"].(string); ok {
							assert.True(t, strings.HasSuffix(ref, "duration_ms") || strings.Contains(ref, "/properties/"), "%s: %s: %s", file, name, ref)
						} else {
							assert.Equal(t, "number", pm["type"], "%s: %s is a decimal number of milliseconds", file, name)
						}
					}
				}
			}
			for _, v := range n {
				walk(file, v)
			}
		case []any:
			for _, v := range n {
				walk(file, v)
			}
		}
	}
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join(schemaDir(t), en.Name()))
		require.NoError(t, err)
		var doc any
		require.NoError(t, json.Unmarshal(b, &doc))
		walk(en.Name(), doc)
	}
}

// The schemas themselves are valid JSON Schema documents.
func TestSchemasCompile(t *testing.T) {
	entries, err := os.ReadDir(schemaDir(t))
	require.NoError(t, err)
	for _, en := range entries {
		name, ok := strings.CutSuffix(en.Name(), ".schema.json")
		require.True(t, ok, en.Name())
		compileSchema(t, name)
		b, err := os.ReadFile(filepath.Join(schemaDir(t), en.Name()))
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(b, &doc))
		assert.Contains(t, doc, "title", en.Name())
	}
}
