package engine

import (
	"fmt"
	"slices"
	"strings"
)

// The spelling of Backend, Threading and State: one table each, indexed by
// value, read by String, UnmarshalText and the environment variables alike.

// spell returns names[v], or "typ(v)" for a value without a name.
func spell[T ~int | ~uint8 | ~uint32](names []string, v T, typ string) string {
	if i := int(v); i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// parseName returns the value names spells s; "" is the zero value.
func parseName[T ~int | ~uint8](names []string, s, what string) (T, error) {
	if s == "" {
		return 0, nil
	}
	if i := slices.Index(names, s); i >= 0 {
		return T(i), nil
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return 0, fmt.Errorf("engine: unknown %s %q (want %s)", what, s, want)
}

// unmarshalText sets *dst to the value names spells text, and leaves it as
// it was on an error.
func unmarshalText[T ~int | ~uint8](dst *T, text []byte, names []string, what string) error {
	v, err := parseName[T](names, string(text), what)
	if err == nil {
		*dst = v
	}
	return err
}
