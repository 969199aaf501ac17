package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// skipDirs are the trees left out of the surface: none of them is a
// package a user imports for its API (internal/ cannot be imported, the
// others hold programs and tests).
var skipDirs = map[string]bool{
	"internal": true,
	"testdata": true,
	"examples": true,
	"bench":    true,
	"tests":    true,
	"vendor":   true,
}

// Counts is one package's exported surface by kind.
type Counts struct {
	Funcs, Types, Consts, Vars, Methods int
	// With counts the exported top-level funcs named With*: the options.
	With int
}

// Total is every exported name the package declares (With is a subset of
// Funcs, so it is not added again).
func (c Counts) Total() int { return c.Funcs + c.Types + c.Consts + c.Vars + c.Methods }

func (c *Counts) add(o Counts) {
	c.Funcs += o.Funcs
	c.Types += o.Types
	c.Consts += o.Consts
	c.Vars += o.Vars
	c.Methods += o.Methods
	c.With += o.With
}

// Package is one directory's package and its counts.
type Package struct {
	Dir  string // relative to the module root, "." for the root
	Name string
	Counts
	// Names lists what was counted, as "func Name", "method T.Name",
	// "type T", "const C" and "var V", sorted.
	Names []string
}

// Count walks the module rooted at root (the directory holding go.mod) and
// counts each package's exported top-level funcs, types, consts and vars
// and the exported methods of its exported types. Test files, package main,
// nested modules (a directory with its own go.mod) and the trees in
// skipDirs are left out. Files are read whatever their build constraints:
// a name declared under two constraints (a cgo file and its stub) is
// counted once, so the figure is the union over every build.
func Count(root string) ([]Package, error) {
	var pkgs []Package
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root {
			name := d.Name()
			if skipDirs[name] || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module has a surface of its own
			}
		}
		p, ok, err := countDir(path)
		if err != nil || !ok {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		p.Dir = filepath.ToSlash(rel)
		pkgs = append(pkgs, p)
		return nil
	})
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Dir < pkgs[j].Dir })
	return pkgs, err
}

// countDir counts the package in dir; ok is false when dir holds no
// library package (no Go files, only tests, or package main).
func countDir(dir string) (p Package, ok bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return p, false, err
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return p, false, err
		}
		if f.Name.Name == "main" {
			return p, false, nil
		}
		if p.Name != "" && p.Name != f.Name.Name {
			return p, false, fmt.Errorf("%s: packages %s and %s", dir, p.Name, f.Name.Name)
		}
		p.Name = f.Name.Name
		countFile(f, seen, &p.Counts)
		files = append(files, f)
	}
	countPromoted(files, seen, &p.Counts)
	for k := range seen {
		p.Names = append(p.Names, k)
	}
	sort.Strings(p.Names)
	return p, p.Name != "", nil
}

// countFile adds f's exported declarations not already in seen.
func countFile(f *ast.File, seen map[string]bool, c *Counts) {
	mark := func(key string, n *int) {
		if !seen[key] {
			seen[key] = true
			*n++
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if !ast.IsExported(name) {
				continue
			}
			if d.Recv == nil {
				if !seen["func "+name] && isOption(name) {
					c.With++
				}
				mark("func "+name, &c.Funcs)
				continue
			}
			if recv := recvName(d.Recv.List[0].Type); ast.IsExported(recv) {
				mark("method "+recv+"."+name, &c.Methods)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if ast.IsExported(s.Name.Name) {
						mark("type "+s.Name.Name, &c.Types)
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if !ast.IsExported(id.Name) {
							continue
						}
						if d.Tok == token.CONST {
							mark("const "+id.Name, &c.Consts)
						} else {
							mark("var "+id.Name, &c.Vars)
						}
					}
				}
			}
		}
	}
}

// countPromoted adds the exported methods an exported type gets from an
// embedded unexported type (transitively): go doc lists them as the
// type's own, so a user meets them as such.
func countPromoted(files []*ast.File, seen map[string]bool, c *Counts) {
	methods := map[string][]string{} // receiver type: its exported methods
	embeds := map[string][]string{}  // struct type: its embedded local types
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && ast.IsExported(d.Name.Name) {
					recv := recvName(d.Recv.List[0].Type)
					methods[recv] = append(methods[recv], d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						if name := recvName(fld.Type); len(fld.Names) == 0 && name != "" {
							embeds[ts.Name.Name] = append(embeds[ts.Name.Name], name)
						}
					}
				}
			}
		}
	}
	for t := range embeds {
		if !ast.IsExported(t) {
			continue
		}
		visited := map[string]bool{}
		var walk func(u string)
		walk = func(u string) {
			for _, e := range embeds[u] {
				if ast.IsExported(e) || visited[e] {
					continue
				}
				visited[e] = true
				for _, m := range methods[e] {
					if key := "method " + t + "." + m; !seen[key] {
						seen[key] = true
						c.Methods++
					}
				}
				walk(e)
			}
		}
		walk(t)
	}
}

// isOption reports whether a func is named as an option: With followed by
// an upper-case letter (WithBackend, not Without).
func isOption(name string) bool {
	rest, ok := strings.CutPrefix(name, "With")
	return ok && rest != "" && unicode.IsUpper([]rune(rest)[0])
}

// recvName is the receiver's type name: T for T, *T, T[K] and *T[K].
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
