package hcl

import (
	"bytes"
	"encoding/json"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"
)

// FuzzLoad feeds arbitrary files to the decoder. It must never panic; every
// diagnostic must carry a range inside the file; a load without errors must give a
// cluster that passes its own validation; printing must not panic either. The seed
// corpus in testdata/fuzz/FuzzLoad (the fixtures and examples) runs in every go test.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`cluster "x" { master "a" { address = "127.0.0.1:1" } }`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, src []byte) {
		// Through the environment, so that files not declaring the variable are not
		// refused for an undeclared -var (a diagnostic without a place in the file).
		getenv := func(k string) string {
			if k == EnvPrefix+"redis_password" {
				return "fuzz-secret"
			}
			return ""
		}
		cfg, diags := Load("fuzz.hcl", src, Options{Getenv: getenv})
		if cfg == nil {
			t.Fatal("nil Config")
		}
		for _, d := range diags {
			if d.Subject == nil {
				t.Fatalf("diagnostic without a range: %s: %s", d.Summary, d.Detail)
			}
			if d.Subject.Filename != "fuzz.hcl" {
				t.Fatalf("diagnostic in file %q", d.Subject.Filename)
			}
			if d.Subject.Start.Byte < 0 || d.Subject.End.Byte > len(src) || d.Subject.Start.Byte > d.Subject.End.Byte {
				t.Fatalf("range %v outside the %d-byte file", d.Subject, len(src))
			}
		}
		if diags.HasErrors() != (cfg.Cluster == nil) {
			t.Fatalf("errors=%v but cluster=%v", diags.HasErrors(), cfg.Cluster)
		}
		if cfg.Cluster != nil && cfg.Cluster.Validate().HasErrors() {
			t.Fatalf("loaded cluster fails Validate: %v", cfg.Cluster.Validate())
		}
		var buf bytes.Buffer
		if err := cfg.WriteDiagnostics(&buf, diags, true); err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(cfg.Report(diags)); err != nil {
			t.Fatal(err)
		}
		if out, err := Format(src); err == nil {
			if _, diags := Parse("fmt.hcl", out); diags.HasErrors() {
				t.Fatalf("Format produced invalid syntax: %v", hclv2.Diagnostics(diags))
			}
		}
	})
}
