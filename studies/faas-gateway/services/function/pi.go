package function

import (
	"math/rand/v2"
	"strconv"
)

// EstimatePi draws n points in the unit square and returns four times the
// share that falls inside the quarter circle. PCG costs a few nanoseconds per
// draw, so n directly sets the CPU budget of a call.
func EstimatePi(n, seed uint64) float64 {
	if n == 0 {
		return 0
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var inside uint64
	for range n {
		x, y := r.Float64(), r.Float64()
		if x*x+y*y <= 1 {
			inside++
		}
	}
	return 4 * float64(inside) / float64(n)
}

// FormatPi formats an estimate with the five decimals the study asks for.
func FormatPi(pi float64) string {
	return strconv.FormatFloat(pi, 'f', 5, 64)
}
