package conformance

import "pgregory.net/rapid"

// smallRanges holds rapid's generators of the int ranges lo..hi for lo 0
// and 1 and hi below maxSmallRange, made once: the generator draws from
// them at every step, and a generator is a value rapid may share (its
// draws depend only on the T).
var smallRanges = func() (g [2][maxSmallRange]*rapid.Generator[int]) {
	for lo := range 2 {
		for hi := lo; hi < maxSmallRange; hi++ {
			g[lo][hi] = rapid.IntRange(lo, hi)
		}
	}
	return g
}()

const maxSmallRange = 64

// intRange is rapid.IntRange(lo, hi), from smallRanges where it holds it.
func intRange(lo, hi int) *rapid.Generator[int] {
	if lo >= 0 && lo < 2 && hi >= lo && hi < maxSmallRange {
		return smallRanges[lo][hi]
	}
	return rapid.IntRange(lo, hi)
}
