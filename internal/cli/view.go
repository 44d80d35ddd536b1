package cli

import "io"

// Views: a command's output as a human text or a JSON document (command.go).

// viewArgs is the -json flag of a command with a JSON view.
type viewArgs struct{ json bool }

func (v *viewArgs) flags(f *Flags) { f.Bool(&v.json, "json", "print one JSON document on stdout") }

// jsonDoc is a command's output: its JSON form is the value itself, its human
// form what human writes.
type jsonDoc interface {
	human(env *Env) error
}

// lineDoc is one line of a stream (watch, events): its JSON form is the value
// itself, its human form humanLine.
type lineDoc interface {
	humanLine() string
}

// showLine prints one line of a stream in the view the command line asked for.
func showLine(env *Env, asJSON bool, doc lineDoc) error {
	if asJSON {
		return writeLine(env.Stdout, doc)
	}
	_, err := io.WriteString(env.Stdout, doc.humanLine()+"\n")
	return err
}

// jsonWriter is a jsonDoc that writes its JSON form itself (a listing streamed
// one lock at a time).
type jsonWriter interface {
	writeJSON(w io.Writer) error
}

// show prints doc in the view the command line asked for.
func show(env *Env, asJSON bool, doc jsonDoc) error {
	if w, ok := doc.(jsonWriter); ok && asJSON {
		return w.writeJSON(env.Stdout)
	}
	if asJSON {
		return writeDoc(env.Stdout, doc)
	}
	return doc.human(env)
}
