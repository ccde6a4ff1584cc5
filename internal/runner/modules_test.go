package runner

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
)

// fakeModule records its starts and stops in a shared log.
type fakeModule struct {
	name string
	fail bool
	log  *[]string
}

func (m fakeModule) start(_ context.Context, values map[string]string) error {
	*m.log = append(*m.log, "start "+m.name)
	if m.fail {
		return errors.New(m.name + " failed")
	}
	values[m.name] = "up"
	return nil
}

func (m fakeModule) stop() error {
	*m.log = append(*m.log, "stop "+m.name)
	return nil
}

func TestModulesStopInReverseOfStart(t *testing.T) {
	for _, c := range []struct {
		name   string
		fail   string // the module whose start fails; "" for none
		want   []string
		values []string
	}{
		{
			name:   "all start",
			want:   []string{"start hosts", "start deps", "start services", "stop services", "stop deps", "stop hosts"},
			values: []string{"deps", "hosts", "services"},
		},
		{
			// The failed module is stopped too (it may have begun), the
			// ones after it are never started.
			name:   "deps fail",
			fail:   "deps",
			want:   []string{"start hosts", "start deps", "stop deps", "stop hosts"},
			values: []string{"hosts"},
		},
		{
			name: "first fails",
			fail: "hosts",
			want: []string{"start hosts", "stop hosts"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log []string
			var all []module
			for _, name := range []string{"hosts", "deps", "services"} {
				all = append(all, fakeModule{name: name, fail: name == c.fail, log: &log})
			}
			var ms modules
			values := map[string]string{}
			err := ms.start(context.Background(), values, all...)
			if (err != nil) != (c.fail != "") {
				t.Fatalf("start: %v", err)
			}
			if err := ms.stop(); err != nil {
				t.Fatal(err)
			}
			if err := ms.stop(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(log, c.want) {
				t.Errorf("order %v, want %v", log, c.want)
			}
			if got := slices.Sorted(maps.Keys(values)); !slices.Equal(got, c.values) {
				t.Errorf("values from %v, want %v", got, c.values)
			}
		})
	}
}
