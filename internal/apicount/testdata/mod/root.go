package fixture

// Counted: funcs F, F2, WithA, Without; types T, Alias, G, I; methods T.M, T.N,
// T.X (promoted from the embedded unexported t), G.Get; consts A, B; var V.
// WithA is the one option.

func F()                  {}
func WithA() int          { return 0 }
func Without()            {}
func with()               {}
func (T) M()              {}
func (*T) N()             {}
func (T) m()              {}
func (t) X()              {}
func (g G[K]) Get() (k K) { return k }

type T struct {
	Field int
	t
}
type t struct{}
type Alias = T
type G[K any] struct{}

const (
	A, B = 1, 2
	c    = 3
)

var V, _, v = 1, 2, 3

// I is an interface: its methods are not counted apart from it.
type I interface{ Method() }
