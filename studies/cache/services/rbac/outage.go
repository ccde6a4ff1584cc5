package main

import (
	"log"
	"sync/atomic"
)

// outage logs when a dependency starts and stops failing instead of every
// failure: under load, an outage would otherwise log thousands of lines a
// second. Safe for concurrent use.
type outage struct {
	name string
	down atomic.Bool
}

func (o *outage) failed(err error) {
	if !o.down.Swap(true) {
		log.Printf("%s unavailable (logged again only once it answers): %v", o.name, err)
	}
}

func (o *outage) answered() {
	if o.down.Load() && o.down.Swap(false) {
		log.Printf("%s answers again", o.name)
	}
}
