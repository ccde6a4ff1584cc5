// Package dataset makes the frameworks study's stand-in for the shared
// universities list (../shared/data/universities.json, a 2021 snapshot of
// the Hipo university-domains list): the same record shape, about the same
// size (9,691 records over 205 countries, a few heavy ones, about 2.3 MB
// as written), and Finland with its 33 universities, the University of
// Helsinki among them, as the study's load asks for Finland. It is
// deterministic: every machine measures the same bytes.
package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Sizes of the shared snapshot.
const (
	Records   = 9691
	Countries = 205
	Finnish   = 33
)

// University is one record, with the shared file's field names.
type University struct {
	WebPages      []string `json:"web_pages"`
	Name          string   `json:"name"`
	AlphaTwoCode  string   `json:"alpha_two_code"`
	StateProvince *string  `json:"state-province"`
	Domains       []string `json:"domains"`
	Country       string   `json:"country"`
}

// Syllables of made-up place names, some with the letters real names have
// (the services must carry UTF-8 through).
var syllables = []string{"ka", "lo", "ri", "ve", "sa", "mun", "tor", "el", "ba", "ni", "gö", "ås", "ré", "da", "lin", "por", "ru", "za", "ki", "no"}

var kinds = []string{"University of %s", "%s University", "%s University of Applied Sciences", "%s Institute of Technology", "%s College", "Academy of Fine Arts %s", "%s School of Economics", "Technical University of %s"}

// Generate returns the records, countries in blocks as in the shared file.
func Generate() []University {
	rng := rand.New(rand.NewPCG(2021, 9691))
	counts := countryCounts()
	var out []University
	countries := map[string]bool{}
	for c, n := range counts {
		country, code := countryName(rng, c), alphaCode(c)
		for countries[country] {
			country = countryName(rng, c)
		}
		if c == 0 {
			country, code = "Finland", "FI"
		}
		countries[country] = true
		seen := map[string]bool{}
		for i := range n {
			name := fmt.Sprintf(kinds[rng.IntN(len(kinds))], place(rng))
			if c == 0 && i == Finnish/2 {
				name = "University of Helsinki"
			}
			for seen[name] {
				name += " " + place(rng)
			}
			seen[name] = true
			domain := strings.ToLower(asciiOnly(strings.ReplaceAll(strings.Fields(name)[len(strings.Fields(name))-1], ",", ""))) + fmt.Sprintf("%d.%s", i, strings.ToLower(code))
			u := University{
				WebPages:     []string{"http://www." + domain + "/"},
				Name:         name,
				AlphaTwoCode: code,
				Domains:      []string{domain},
				Country:      country,
			}
			if rng.IntN(10) == 0 {
				state := place(rng)
				u.StateProvince = &state
			}
			if rng.IntN(8) == 0 {
				u.Domains = append(u.Domains, "alumni."+domain)
			}
			out = append(out, u)
		}
	}
	return out
}

// countryCounts gives Finland (index 0) its 33 and spreads the rest over
// the other countries as the snapshot does: a long tail and a few with
// hundreds or thousands (its largest, the United States, has 2,164).
func countryCounts() []int {
	counts := make([]int, Countries)
	counts[0] = Finnish
	rest := Records - Finnish
	weights := make([]float64, Countries-1)
	var sum float64
	for i := range weights {
		weights[i] = 1 / math.Pow(float64(i+1), 1.15)
		sum += weights[i]
	}
	given := 0
	for i, w := range weights {
		counts[i+1] = max(1, int(float64(rest)*w/sum))
		given += counts[i+1]
	}
	counts[1] += rest - given // the largest takes what rounding left
	return counts
}

func place(rng *rand.Rand) string {
	var b strings.Builder
	for range 2 + rng.IntN(3) {
		b.WriteString(syllables[rng.IntN(len(syllables))])
	}
	s := b.String()
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

func countryName(rng *rand.Rand, i int) string {
	return place(rng) + []string{"ia", "land", "stan", "ea", "or"}[i%5]
}

// alphaCode is a two-letter code unique to the country's index, never FI.
func alphaCode(i int) string {
	code := string([]byte{'A' + byte(i/26%26), 'A' + byte(i%26)})
	if code == "FI" {
		return "ZZ"
	}
	return code
}

func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 {
			return r
		}
		return -1
	}, s)
}

// Country returns the records of a country, in order.
func Country(all []University, name string) []University {
	return slices.DeleteFunc(slices.Clone(all), func(u University) bool { return u.Country != name })
}
