// Command web is the integration test's pod: a static HTTP server for a
// FROM-scratch image. It binds the pod's own address, which exists only
// inside the pod's namespace within the cluster's.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", ":8080", "address to serve on")
	flag.Parse()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "msbench pod says hello to %s\n", r.URL.Path)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
