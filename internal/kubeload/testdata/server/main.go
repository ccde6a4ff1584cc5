// Command server is the target of kubeload's integration test: HTTP on
// the pod's own address (POD_IP), port 8080. / answers "ok" after a
// short varying pause, so latencies spread over a range; /echo answers
// the method and body it got.
package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

func main() {
	ip := os.Getenv("POD_IP")
	if net.ParseIP(ip) == nil {
		log.Fatalf("POD_IP %q is not an address", ip)
	}
	var n atomic.Int64
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(n.Add(1)%5) * 500 * time.Microsecond)
		fmt.Fprint(w, "ok")
	})
	http.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", r.Header.Get("X-Ask"))
		fmt.Fprintf(w, "%s %s", r.Method, body)
	})
	log.Fatal(http.ListenAndServe(net.JoinHostPort(ip, "8080"), nil))
}
