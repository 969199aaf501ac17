package metrics

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
)

// TestEveryLoopMetric: every engine.Metrics field is exported once, under a
// name of its own, and its family reads that field: each field is given a
// distinct value, and the family named for it must return it.
func TestEveryLoopMetric(t *testing.T) {
	mt := reflect.TypeFor[engine.Metrics]()
	var m engine.Metrics
	mv := reflect.ValueOf(&m).Elem()
	for i := range mt.NumField() {
		f := mv.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64: // time.Duration: nanoseconds
			f.SetInt(int64(i+1) * 1e9)
		case reflect.Uint64:
			f.SetUint(uint64(i+1) * 1e9)
		default:
			t.Fatalf("engine.Metrics.%s: kind %v not handled", mt.Field(i).Name, f.Kind())
		}
	}
	fields, names := map[string]bool{}, map[string]bool{}
	for _, fam := range loopFamilies {
		sf, ok := mt.FieldByName(fam.field)
		require.True(t, ok, "no field %s", fam.field)
		require.False(t, fields[fam.field], "field %s exported twice", fam.field)
		fields[fam.field] = true
		name := fam.desc.String()
		require.False(t, names[name], "family %s twice", name)
		names[name] = true
		want := float64(sf.Index[0] + 1)
		if sf.Type != reflect.TypeFor[int]() && sf.Type != reflect.TypeFor[uint64]() {
			want = float64(sf.Index[0] + 1) // a duration, exported in seconds
		} else {
			want *= 1e9
		}
		require.Equal(t, want, fam.value(&m), "family for %s", fam.field)
	}
	require.Len(t, fields, mt.NumField(), "an engine.Metrics field is not exported (metrics/loop.go)")
}
