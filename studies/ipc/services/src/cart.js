'use strict';
// Cart: the customer's shopping cart, with its totals.
const catalogue = require('./lib/catalogue');
const { mongoStore } = require('./lib/mongo-store');
const { serve } = require('./lib/serve');

serve('cart', mongoStore({
  database: 'ipc_cart',
  collection: 'carts',
  documents: (products) => catalogue.ids(catalogue.CUSTOMERS).map((customer) => ({
    _id: String(customer), customer, items: catalogue.cart(customer, products),
  })),
  key: ({ customer }) => String(customer),
  missing: ({ customer }) => `no such customer ${customer}`,
  answer: ({ customer, items }) => ({
    customer,
    items,
    item_count: items.reduce((sum, line) => sum + line.quantity, 0),
    total_cents: items.reduce((sum, line) => sum + line.quantity * line.price_cents, 0),
    currency: catalogue.CURRENCY,
  }),
}));
