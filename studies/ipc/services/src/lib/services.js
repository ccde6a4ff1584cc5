'use strict';
// The contract between the gateway and the five services, one entry per
// service, that every transport reads: the fields of a request (all ids),
// the REST route, the gRPC service and method (../../proto/NAME.proto), and
// the AMQP request queue.

const SERVICES = {
  product: {
    fields: ['product'],
    route: '/products/:product',
    grpc: { service: 'ipc.product.Product', method: 'GetProduct' },
  },
  reviews: {
    fields: ['product'],
    route: '/products/:product/reviews',
    grpc: { service: 'ipc.reviews.Reviews', method: 'GetReviews' },
  },
  recommendations: {
    fields: ['product'],
    route: '/products/:product/recommendations',
    grpc: { service: 'ipc.recommendations.Recommendations', method: 'GetRecommendations' },
  },
  shipping: {
    fields: ['product', 'customer'],
    route: '/products/:product/shipping', // customer in the query
    grpc: { service: 'ipc.shipping.Shipping', method: 'GetShippingOptions' },
  },
  cart: {
    fields: ['customer'],
    route: '/customers/:customer/cart',
    grpc: { service: 'ipc.cart.Cart', method: 'GetCart' },
  },
};

// The parts of a page, in the order Server-Timing lists them.
const NAMES = Object.keys(SERVICES);

for (const [name, s] of Object.entries(SERVICES)) {
  s.name = name;
  s.queue = `ipc.${name}`;
}

module.exports = { SERVICES, NAMES };
