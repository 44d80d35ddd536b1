package tui_test

import (
	"go/types"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

// TestExportedAPINamesNoInternalType: every exported declaration of tui (types,
// their exported fields and methods, functions, variables, constants) names only
// types a program outside this module can name too: none from an internal
// package, since a user of the console could neither build nor read one.
func TestExportedAPINamesNoInternalType(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, "github.com/redlock/redlock/tui")
	require.NoError(t, err)
	require.Len(t, pkgs, 1)
	require.Empty(t, pkgs[0].Errors)
	tp := pkgs[0].Types
	w := apiWalker{self: tp, seen: map[types.Type]bool{}}
	for _, name := range tp.Scope().Names() {
		obj := tp.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		w.where = name
		w.walk(obj.Type())
	}
	require.Empty(t, w.found, "exported tui declarations name internal types")
}

// apiWalker visits the types an exported declaration names, descending into
// tui's own named types (their exported fields and methods) but not into other
// packages' types: what those name is their package's concern.
type apiWalker struct {
	self  *types.Package
	seen  map[types.Type]bool
	where string
	found []string
}

func (w *apiWalker) walk(t types.Type) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		w.object(t.Obj())
		for i := range t.TypeArgs().Len() {
			w.walk(t.TypeArgs().At(i))
		}
		if t.Obj().Pkg() != w.self {
			return
		}
		w.walk(t.Underlying())
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				w.walk(m.Type())
			}
		}
	case *types.Alias:
		w.object(t.Obj())
		w.walk(types.Unalias(t))
	case *types.Pointer:
		w.walk(t.Elem())
	case *types.Slice:
		w.walk(t.Elem())
	case *types.Array:
		w.walk(t.Elem())
	case *types.Chan:
		w.walk(t.Elem())
	case *types.Map:
		w.walk(t.Key())
		w.walk(t.Elem())
	case *types.Signature:
		w.walk(t.Params())
		w.walk(t.Results())
	case *types.Tuple:
		for i := range t.Len() {
			w.walk(t.At(i).Type())
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				w.walk(f.Type())
			}
		}
	case *types.Interface:
		for i := range t.NumEmbeddeds() {
			w.walk(t.EmbeddedType(i))
		}
		for i := range t.NumExplicitMethods() {
			if m := t.ExplicitMethod(i); m.Exported() {
				w.walk(m.Type())
			}
		}
	}
}

// object records obj when its package is internal.
func (w *apiWalker) object(obj *types.TypeName) {
	if obj.Pkg() == nil {
		return
	}
	p := obj.Pkg().Path()
	if strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") || strings.HasPrefix(p, "internal/") {
		w.found = append(w.found, w.where+": "+p+"."+obj.Name())
	}
}
