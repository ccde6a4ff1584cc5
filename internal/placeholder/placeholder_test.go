package placeholder

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	got, err := Expand("{build.app}/api-{lang} --listen {addr}", map[string]string{"build.app": "/b", "lang": "go", "addr": "127.0.0.1:9"})
	if err != nil || got != "/b/api-go --listen 127.0.0.1:9" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := Expand("{port} ${HOME}", map[string]string{}); err == nil || !strings.Contains(err.Error(), "{port}") {
		t.Fatalf("missing value: %v", err)
	}
}
