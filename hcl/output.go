package hcl

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcled"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// WriteDiagnostics prints diags as file:line:col messages with the source snippet
// (hclv2.NewDiagnosticTextWriter), with color when asked, then redacted: no password
// or sensitive value reaches w.
func (c *Config) WriteDiagnostics(w io.Writer, diags hclv2.Diagnostics, color bool) error {
	var buf bytes.Buffer
	tw := hclv2.NewDiagnosticTextWriter(&buf, terminalSafe(c.files), 0, color)
	for _, diag := range diags {
		// The writer prints the values of variables named in an expression; never let it.
		d := *diag
		d.Expression, d.EvalContext = nil, nil
		if err := tw.WriteDiagnostic(&d); err != nil {
			return fmt.Errorf("write diagnostics: %w", err)
		}
	}
	if _, err := io.WriteString(w, c.Redact(buf.String())); err != nil {
		return fmt.Errorf("write diagnostics: %w", err)
	}
	return nil
}

// terminalSafe returns copies of files whose sources show no control or
// invisible format character in a snippet: a file written by another user (a
// commit) must not clear the screen, set the clipboard (OSC 52) or reverse the
// text of whoever validates it. Each such character becomes as many '?' as it
// has bytes, so the diagnostics' byte offsets still hold.
func terminalSafe(files map[string]*hclv2.File) map[string]*hclv2.File {
	out := make(map[string]*hclv2.File, len(files))
	for name, f := range files {
		if f == nil {
			out[name] = f
			continue
		}
		b := bytes.Clone(f.Bytes)
		for i := 0; i < len(b); {
			r, size := utf8.DecodeRune(b[i:])
			if r != '\n' && r != '\t' && r != '\r' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError) {
				for j := i; j < i+size; j++ {
					b[j] = '?'
				}
			}
			i += size
		}
		cp := *f
		cp.Bytes = b
		out[name] = &cp
	}
	return out
}

// Report is the machine-readable result of a validation, shaped like the output of
// terraform validate -json. Its strings are redacted.
type Report struct {
	Valid        bool         `json:"valid"`
	ErrorCount   int          `json:"error_count"`
	WarningCount int          `json:"warning_count"`
	Diagnostics  []Diagnostic `json:"diagnostics"`
}

// Diagnostic is one error or warning of a Report.
type Diagnostic struct {
	Severity string   `json:"severity"` // "error" or "warning"
	Summary  string   `json:"summary"`
	Detail   string   `json:"detail,omitempty"`
	Range    *Range   `json:"range,omitempty"`
	Snippet  *Snippet `json:"snippet,omitempty"`
}

// Range is a span of a file; lines and columns count from 1, bytes from 0.
type Range struct {
	Filename string `json:"filename"`
	Start    Pos    `json:"start"`
	End      Pos    `json:"end"`
}

// Pos is one position in a file.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// Snippet is the source around a diagnostic: Code holds the lines of the subject
// starting at StartLine, the highlight offsets are bytes into Code, and Context is
// the header of the enclosing block when there is one.
type Snippet struct {
	Context              *string `json:"context"`
	Code                 string  `json:"code"`
	StartLine            int     `json:"start_line"`
	HighlightStartOffset int     `json:"highlight_start_offset"`
	HighlightEndOffset   int     `json:"highlight_end_offset"`
	Values               []any   `json:"values"`
}

// Report converts diags into a Report; valid means no error (warnings allowed).
func (c *Config) Report(diags hclv2.Diagnostics) *Report {
	r := &Report{Diagnostics: []Diagnostic{}}
	for _, diag := range diags {
		out := Diagnostic{Severity: "error", Summary: c.Redact(diag.Summary), Detail: c.Redact(diag.Detail)}
		if diag.Severity == hclv2.DiagWarning {
			out.Severity = "warning"
			r.WarningCount++
		} else {
			r.ErrorCount++
		}
		if s := diag.Subject; s != nil {
			out.Range = &Range{
				Filename: s.Filename,
				Start:    Pos{Line: s.Start.Line, Column: s.Start.Column, Byte: s.Start.Byte},
				End:      Pos{Line: s.End.Line, Column: s.End.Column, Byte: s.End.Byte},
			}
			out.Snippet = c.snippet(diag)
		}
		r.Diagnostics = append(r.Diagnostics, out)
	}
	r.Valid = r.ErrorCount == 0
	return r
}

func (c *Config) snippet(diag *hclv2.Diagnostic) *Snippet {
	subj := *diag.Subject
	f := c.files[subj.Filename]
	if f == nil {
		return nil
	}
	src := f.Bytes
	ctxRange := subj
	if diag.Context != nil {
		ctxRange = hclv2.RangeOver(subj, *diag.Context)
	}
	if ctxRange.Start.Byte < 0 || ctxRange.End.Byte > len(src) || ctxRange.Start.Byte > ctxRange.End.Byte {
		return nil
	}
	// Widen to whole lines.
	start := bytes.LastIndexByte(src[:ctxRange.Start.Byte], '\n') + 1
	end := ctxRange.End.Byte
	if nl := bytes.IndexByte(src[end:], '\n'); nl >= 0 {
		end += nl
	} else {
		end = len(src)
	}
	if end > start && src[end-1] == '\r' {
		end--
	}
	code := string(src[start:end])
	redacted := c.Redact(code)
	s := &Snippet{
		Code:                 redacted,
		StartLine:            ctxRange.Start.Line,
		HighlightStartOffset: subj.Start.Byte - start,
		HighlightEndOffset:   subj.End.Byte - start,
		Values:               []any{},
	}
	if redacted != code {
		// Offsets into the original no longer hold; highlight the whole snippet.
		s.HighlightStartOffset, s.HighlightEndOffset = 0, len(redacted)
	}
	if s.HighlightEndOffset > len(s.Code) {
		s.HighlightEndOffset = len(s.Code)
	}
	if s.HighlightStartOffset > s.HighlightEndOffset {
		s.HighlightStartOffset = s.HighlightEndOffset
	}
	if cs := hcled.ContextString(f, subj.Start.Byte); cs != "" {
		cs = c.Redact(cs)
		s.Context = &cs
	}
	return s
}

// Format returns src in canonical layout (hclwrite: aligned equals signs, two-space
// indentation, normalised spacing). It returns an error, of type
// hclv2.Diagnostics, when src is not valid HCL syntax; it does not check the schema.
func Format(src []byte) ([]byte, error) {
	out, diags := FormatFile("", src)
	if diags.HasErrors() {
		return nil, diags
	}
	return out, nil
}

// FormatFile is Format with a file name for the diagnostics.
func FormatFile(filename string, src []byte) ([]byte, hclv2.Diagnostics) {
	if _, diags := hclsyntax.ParseConfig(src, filename, hclv2.InitialPos); diags.HasErrors() {
		return nil, diags
	}
	f, diags := hclwrite.ParseConfig(src, filename, hclv2.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	out := hclwrite.Format(f.Bytes())
	// One trailing newline, no trailing blank lines.
	out = append(bytes.TrimRight(out, "\n"), '\n')
	if len(strings.TrimSpace(string(out))) == 0 {
		return []byte{}, nil
	}
	return out, nil
}
