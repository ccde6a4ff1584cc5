// Package function holds the four functions of the faas-gateway study and the
// net/rpc service that exposes them. The gateway and the RPC server share these
// types so that both sides of the wire agree on names and payloads.
package function

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// DefaultAddr is the RPC server's default address, and where the gateways
// look for it unless told otherwise.
const DefaultAddr = "127.0.0.1:40123"

// ServiceName is the name the RPC server registers the functions under.
const ServiceName = "Function"

// The RPC method names, as a client passes them to (*rpc.Client).Call.
const (
	MethodEmpty = ServiceName + ".Empty"
	MethodSleep = ServiceName + ".Sleep"
	MethodMath  = ServiceName + ".Math"
	MethodImage = ServiceName + ".Image"
)

// DefaultSleep is how long the sleep function waits, as in the original study.
const DefaultSleep = time.Second

// ErrNoSamples is returned by Math for n = 0, where pi cannot be estimated.
var ErrNoSamples = errors.New("math needs at least one sample")

// Args is the request of every function; only Math reads N. One type for all
// keeps gob happy (it refuses structs without exported fields).
type Args struct {
	N uint64
}

// Reply is the result of every function. FnNanos is measured inside the RPC
// server so the gateway can separate function time from transport time.
type Reply struct {
	Body    []byte
	FnNanos int64
}

// Service is the net/rpc receiver. Its exported methods are exactly the RPC
// methods: net/rpc logs a complaint about any other exported method.
type Service struct {
	imagePath string
	sleep     time.Duration
}

// NewService returns a Service that transforms the PNG at imagePath and whose
// sleep function waits for sleep.
func NewService(imagePath string, sleep time.Duration) *Service {
	return &Service{imagePath: imagePath, sleep: sleep}
}

// Empty does nothing: the reference point for the framework overhead.
func (s *Service) Empty(_ Args, reply *Reply) error {
	start := time.Now()
	*reply = Reply{FnNanos: time.Since(start).Nanoseconds()}
	return nil
}

// Sleep waits for the configured time (1 s in the study).
func (s *Service) Sleep(_ Args, reply *Reply) error {
	start := time.Now()
	time.Sleep(s.sleep)
	*reply = Reply{FnNanos: time.Since(start).Nanoseconds()}
	return nil
}

// Math estimates pi with args.N Monte Carlo samples and replies with the
// estimate formatted with five decimals.
func (s *Service) Math(args Args, reply *Reply) error {
	start := time.Now()
	if args.N == 0 {
		return ErrNoSamples
	}
	// A fresh seed per call keeps calls independent, as a real function
	// would be; the cost per sample does not depend on it.
	pi := EstimatePi(args.N, rand.Uint64())
	*reply = Reply{Body: []byte(FormatPi(pi)), FnNanos: time.Since(start).Nanoseconds()}
	return nil
}

// Image reads the input PNG from disk, transforms it and replies with the
// PNG-encoded result.
func (s *Service) Image(_ Args, reply *Reply) error {
	start := time.Now()
	out, err := TransformFile(s.imagePath)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	*reply = Reply{Body: out, FnNanos: time.Since(start).Nanoseconds()}
	return nil
}
