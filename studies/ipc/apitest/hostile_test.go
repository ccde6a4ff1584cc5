package apitest

import (
	"net/http"
	"testing"

	"github.com/msbench/msbench/internal/hostile"
)

// checkHostile sends p what a broken or hostile client sends: each such
// request ends within the program's limit, with a 4xx or a closed
// connection, and a normal request to path is answered after each.
func checkHostile(t *testing.T, p *program, path string) {
	head := "GET " + path + " HTTP/1.1\r\nHost: ipc.test\r\n"
	cases := hostile.Cases(head, hostile.Limits{ReadHeader: headersTimeout, Read: requestTimeout, MaxBody: maxBody})
	for i, c := range cases {
		cases[i].Reason = map[string]string{"oversized body": "request body over", "oversized chunked body": "request body over"}[c.Name]
	}
	hostile.Check(t, p.style+" "+p.name, p.addr, cases, func(t *testing.T) {
		wantStatus(t, path, get(t, p.base+path), http.StatusOK)
	})
}
