package e2e

import (
	"bufio"
	"bytes"
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
	if _, hasErr := m["error"]; hasErr && len(m) <= 3 {
		if _, diag := m["diagnostics"]; diag || len(m) == 2 {
			name = "error"
		}
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

	r = e.run("acquire", "j", "-json")
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
	assert.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "force-expire", r.stdout)

	// watch: JSON lines.
	cmd := e.command("", "watch", "-interval", "100ms")
	var out bytes.Buffer
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

	// A broken file: still one JSON document on stdout, with the diagnostics.
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	require.NoError(t, os.WriteFile(bad, []byte("cluster \"x\" {\n  ttl = \"30\"\n}\n"), 0o600))
	for _, args := range [][]string{{"acquire", "j"}, {"locks"}, {"plan"}, {"nodes"}, {"release", "j", "-token", "t"}} {
		r = e.run(append(args, "-json", "-config", bad)...)
		assert.NotEqual(t, 0, r.code)
		doc := checkDoc(t, args[0], r.stdout)
		assert.Contains(t, doc["error"], "bad.hcl", "%v", args)
	}
	r = e.run("validate", "-json", "-config", bad)
	assert.Equal(t, 2, r.code)
	v := checkDoc(t, "validate", r.stdout)
	assert.Equal(t, false, v["valid"])
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
