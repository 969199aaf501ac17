package stats

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSpreadMedianAndRange(t *testing.T) {
	s := Of([]float64{5, 1, 3})
	require.Equal(t, Num(3), s.Median)
	require.Equal(t, Num(1), s.Min)
	require.Equal(t, Num(5), s.Max)
	require.Equal(t, []Num{5, 1, 3}, s.Values, "rounds keep their measured order")

	require.Equal(t, Num(2.5), Of([]float64{4, 1, 2, 3}).Median, "even count: mean of the middle two")
}

func TestSpreadSkipsMissingRounds(t *testing.T) {
	s := Of([]float64{math.NaN(), 7, math.NaN(), 9})
	require.Equal(t, Num(8), s.Median)
	require.Equal(t, Num(7), s.Min)
	require.True(t, s.Valid())
	require.False(t, Of([]float64{math.NaN()}).Valid())
	require.False(t, Of(nil).Valid())
}

func TestRecorderPercentiles(t *testing.T) {
	r := NewRecorder()
	for i := 1; i <= 1000; i++ { // 1..1000 µs, one each
		r.Record(time.Duration(i) * time.Microsecond)
	}
	l := r.Summary()
	require.EqualValues(t, 1000, l.Count)
	require.InDelta(t, 500, l.P50, 1)
	require.InDelta(t, 900, l.P90, 1)
	require.InDelta(t, 990, l.P99, 1)
	require.InDelta(t, 999, l.P999, 1)
	require.InDelta(t, 1000, l.Max, 1)
}

func TestRecorderClampsAndEmpty(t *testing.T) {
	r := NewRecorder()
	require.Equal(t, Latency{}, r.Summary())
	r.Record(0)               // below 1 µs counts as 1 µs
	r.Record(100 * time.Hour) // beyond the range counts as its top
	l := r.Summary()
	require.EqualValues(t, 2, l.Count)
	require.InDelta(t, 1, l.P50, 0.01)
	require.InEpsilon(t, 60e6, l.Max, 0.001)
}

func TestNumJSONKeepsMissingFigures(t *testing.T) {
	b, err := json.Marshal(Of([]float64{math.NaN(), 2}))
	require.NoError(t, err)
	require.JSONEq(t, `{"median":2,"min":2,"max":2,"values":[null,2]}`, string(b))
	var s Spread
	require.NoError(t, json.Unmarshal(b, &s))
	require.True(t, math.IsNaN(float64(s.Values[0])))
	require.Equal(t, Num(2), s.Median)
}
