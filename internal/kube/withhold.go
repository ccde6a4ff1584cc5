package kube

import (
	"cmp"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
)

// Withholder keeps secrets out of text that may echo them: an API
// server's error quoting the object it refused, a pod's log. Each secret,
// plain or as its base64 (a Secret's data as the API shows it), reads
// [withheld]. The zero Withholder withholds nothing.
type Withholder struct{ r *strings.Replacer }

// NewWithholder withholds secrets; empty ones are ignored.
func NewWithholder(secrets ...string) Withholder {
	var forms []string
	for _, s := range secrets {
		if s != "" {
			forms = append(forms, s, base64.StdEncoding.EncodeToString([]byte(s)))
		}
	}
	if len(forms) == 0 {
		return Withholder{}
	}
	// A Replacer tries its patterns in argument order: longest first, so
	// that a secret holding another is withheld whole.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	var pairs []string
	for _, f := range slices.Compact(forms) {
		pairs = append(pairs, f, "[withheld]")
	}
	return Withholder{strings.NewReplacer(pairs...)}
}

// Replace is s with the secrets withheld.
func (w Withholder) Replace(s string) string {
	if w.r == nil {
		return s
	}
	return w.r.Replace(s)
}

// Error is err with the secrets withheld from its message; err itself
// when it holds none, so that errors.Is still sees its causes.
func (w Withholder) Error(err error) error {
	if err == nil {
		return nil
	}
	if msg := w.Replace(err.Error()); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}
