package apitest

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/msbench/msbench/internal/apicheck"
)

// rawCodec sends and receives bytes as they are, so that a request can be
// anything, not only a well-formed message.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }

func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = bytes.Clone(data)
	return nil
}

// Name is the content subtype a gRPC server expects of protobuf.
func (rawCodec) Name() string { return "proto" }

// methods are the gRPC methods, one per service (../services/proto).
var methods = map[string]string{
	"product":         "/ipc.product.Product/GetProduct",
	"reviews":         "/ipc.reviews.Reviews/GetReviews",
	"recommendations": "/ipc.recommendations.Recommendations/GetRecommendations",
	"shipping":        "/ipc.shipping.Shipping/GetShippingOptions",
	"cart":            "/ipc.cart.Cart/GetCart",
}

// varintField encodes field 1 (the product or customer id) = v.
func varintField(v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), v)
}

// idRequest encodes a request for id: the product, or the customer of a
// cart; shipping is asked for customer 1.
func idRequest(name string, id uint64) []byte {
	b := varintField(id)
	if name == "shipping" {
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), 1)
	}
	return b
}

// checkMalformedGRPC sends each gRPC service bytes that are no request, a
// request without its id, and one too large: each is answered with an
// error status, and the services keep serving.
func checkMalformedGRPC(ctx context.Context, t *testing.T, d *deployment) {
	for _, name := range services {
		s := d.services[name]
		conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, c := range []struct {
			what    string
			request []byte
			want    codes.Code
		}{
			{"garbage", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, codes.Internal},
			{"a truncated field", []byte{0x0a, 0xff, 0xff, 0x03, 'a', 'b'}, codes.Internal},
			{"no id", nil, codes.InvalidArgument},
			{"id over 2^32", varintField(1 << 40), codes.Internal},
			{"an unknown id", idRequest(name, 999_999), codes.NotFound},
			{"20 KB", bytes.Repeat([]byte{0x08, 0x01}, 10_000), codes.ResourceExhausted},
		} {
			callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			var reply []byte
			err := conn.Invoke(callCtx, methods[name], c.request, &reply, grpc.ForceCodec(rawCodec{}))
			cancel()
			if got := status.Code(err); got != c.want {
				t.Errorf("%s, %s: %v, want code %v", name, c.what, err, c.want)
			}
		}
		var reply []byte
		if err := conn.Invoke(ctx, methods[name], idRequest(name, 7), &reply, grpc.ForceCodec(rawCodec{})); err != nil || len(reply) == 0 {
			t.Errorf("%s, a good request after the bad ones: %v; its log:\n%s", name, err, s.log())
		}
	}
	apicheck.WantStatus(t, "page after malformed gRPC requests", apicheck.Get(t, d.gateway.base+"/products/7"), http.StatusOK)
}
