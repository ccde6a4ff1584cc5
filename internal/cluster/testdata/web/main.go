// Command web is the integration test's pod: a static HTTP server for a
// FROM-scratch image, which says which pod answered. It binds the pod's
// own address, which exists only inside the pod's namespace within the
// cluster's. With -get it is a client instead, for a pod that reaches
// another one: it prints what the URL answers.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", ":8080", "address to serve on")
	get := flag.String("get", "", "URL to GET and print the answer of, instead of serving")
	flag.Parse()
	if *get != "" {
		body, err := fetch(*get)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(body)
		return
	}
	pod, err := os.Hostname()
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "msbench pod %s says hello to %s\n", pod, r.URL.Path)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}

// fetch tries for a while: a Service's rules may be written a moment
// after the pod starts.
func fetch(url string) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for i := 0; i < 20; i++ {
		resp, err := client.Get(url)
		if err == nil {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				return string(body), nil
			}
			last = fmt.Errorf("%s: %v %s", resp.Status, err, body)
		} else {
			last = err
		}
		time.Sleep(time.Second)
	}
	return "", fmt.Errorf("GET %s: %w", url, last)
}
