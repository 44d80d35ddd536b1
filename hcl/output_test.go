package hcl

import (
	"bytes"
	"encoding/json"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReportJSON(t *testing.T) {
	src := "cluster \"x\" {\n  ttl = \"30\"\n  master \"a\" { address = \"127.0.0.1:7001\" }\n}\n"
	cfg, diags := Load("r.hcl", []byte(src), Options{Getenv: noEnv})
	js, err := json.Marshal(cfg.Report(diags))
	require.NoError(t, err)
	var got struct {
		Valid        bool `json:"valid"`
		ErrorCount   int  `json:"error_count"`
		WarningCount int  `json:"warning_count"`
		Diagnostics  []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Detail   string `json:"detail"`
			Range    struct {
				Filename string `json:"filename"`
				Start    struct{ Line, Column, Byte int }
				End      struct{ Line, Column, Byte int }
			} `json:"range"`
			Snippet struct {
				Context              *string `json:"context"`
				Code                 string  `json:"code"`
				StartLine            int     `json:"start_line"`
				HighlightStartOffset int     `json:"highlight_start_offset"`
				HighlightEndOffset   int     `json:"highlight_end_offset"`
			} `json:"snippet"`
		} `json:"diagnostics"`
	}
	require.NoError(t, json.Unmarshal(js, &got))
	assert.False(t, got.Valid)
	assert.Equal(t, 1, got.ErrorCount)
	assert.Equal(t, 1, got.WarningCount) // fewer than 3 masters
	require.Len(t, got.Diagnostics, 2)
	d := got.Diagnostics[0]
	assert.Equal(t, "error", d.Severity)
	assert.Equal(t, "Duration needs a unit", d.Summary)
	assert.Equal(t, "r.hcl", d.Range.Filename)
	assert.Equal(t, 2, d.Range.Start.Line)
	assert.Equal(t, 9, d.Range.Start.Column)
	assert.Equal(t, `  ttl = "30"`, d.Snippet.Code)
	assert.Equal(t, 2, d.Snippet.StartLine)
	assert.Equal(t, `"30"`, d.Snippet.Code[d.Snippet.HighlightStartOffset:d.Snippet.HighlightEndOffset])
	require.NotNil(t, d.Snippet.Context)
	assert.Equal(t, `cluster "x"`, *d.Snippet.Context)
	assert.Equal(t, "warning", got.Diagnostics[1].Severity)
}

func TestWriteDiagnosticsText(t *testing.T) {
	src := "cluster \"x\" {\n  ttl = \"30\"\n}\n"
	cfg, diags := Load("t.hcl", []byte(src), Options{Getenv: noEnv})
	var buf bytes.Buffer
	require.NoError(t, cfg.WriteDiagnostics(&buf, diags, false))
	out := buf.String()
	assert.Contains(t, out, "Error: Duration needs a unit")
	assert.Contains(t, out, "on t.hcl line 2")
	assert.Contains(t, out, `2:   ttl = "30"`)
	assert.Contains(t, out, `e.g. "30s"`) // a hint follows
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "aligns", in: "cluster \"x\" {\nttl = \"30s\"\n  node_timeout=\"50ms\"\n}\n", want: "cluster \"x\" {\n  ttl          = \"30s\"\n  node_timeout = \"50ms\"\n}\n"},
		{name: "canonical unchanged", in: "cluster \"x\" {\n  ttl = \"30s\"\n}\n", want: "cluster \"x\" {\n  ttl = \"30s\"\n}\n"},
		{name: "trailing blank lines", in: "cluster \"x\" {}\n\n\n", want: "cluster \"x\" {}\n"},
		{name: "keeps comments", in: "# top\ncluster \"x\" { # c\n  ttl = \"1s\" # why\n}\n", want: "# top\ncluster \"x\" { # c\n  ttl = \"1s\"  # why\n}\n"},
		{name: "syntax error", in: "cluster \"x\" {\n  ttl = \"30s\n}\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Format([]byte(tt.in))
			if tt.wantErr {
				require.Error(t, err)
				var diags hclv2.Diagnostics
				assert.ErrorAs(t, err, &diags)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			again, err := Format(got)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again), "formatting is idempotent")
		})
	}
}
