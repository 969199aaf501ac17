// Command apicount prints the exported surface of the ringloop module, per
// package and in total, so the figure issue 41 sets a bound on (the whole
// module, engine and the With* options) is reproducible: `make api`.
//
// Counted are the exported top-level funcs, types, consts and vars and the
// exported methods of exported types, in every library package of the
// module, leaving out internal/, test files, examples/, bench/, tests/ and
// nested modules (metrics/). Fields and interface methods are not counted:
// they belong to the type that declares them.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

func main() {
	root := flag.String("root", ".", "the module's root directory (holding go.mod)")
	list := flag.Bool("list", false, "print every counted name after the table, one per line, prefixed by its package")
	flag.Parse()
	pkgs, err := Count(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(1)
	}
	if err := report(os.Stdout, pkgs); err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(1)
	}
	if *list {
		for _, p := range pkgs {
			for _, n := range p.Names {
				fmt.Printf("%s: %s\n", p.Dir, n)
			}
		}
	}
}

// report writes one row per package, then the module's total.
func report(out io.Writer, pkgs []Package) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "package\tfuncs\ttypes\tconsts\tvars\tmethods\ttotal\tWith*\t")
	var sum Counts
	for _, p := range pkgs {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Dir, p.Funcs, p.Types, p.Consts, p.Vars, p.Methods, p.Total(), p.With)
		sum.add(p.Counts)
	}
	fmt.Fprintf(w, "module\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", sum.Funcs, sum.Types, sum.Consts, sum.Vars, sum.Methods, sum.Total(), sum.With)
	return w.Flush()
}
