package main

import (
	"math/rand/v2"
	"slices"
)

// The seed: 50 roles (10 departments × 5 levels), 200 permissions (40
// resources × 5 actions), each role holding 10 to 60 of them drawn at
// random, 1,919 grants in all. GET /roles then answers 70 KB of JSON, a
// realistic size for an RBAC listing. A fixed random seed makes every
// database the same.
const (
	minGrants = 10
	maxGrants = 60
)

var (
	departments = []string{"platform", "security", "finance", "sales", "support",
		"marketing", "logistics", "engineering", "product", "legal"}
	levels    = []string{"viewer", "editor", "manager", "auditor", "admin"}
	resources = []string{"users", "groups", "roles", "permissions", "sessions",
		"api_keys", "audit_logs", "settings", "billing", "invoices",
		"payments", "refunds", "subscriptions", "plans", "coupons",
		"orders", "carts", "products", "categories", "inventory",
		"warehouses", "shipments", "returns", "suppliers", "customers",
		"contacts", "tickets", "comments", "attachments", "reports",
		"dashboards", "exports", "imports", "webhooks", "integrations",
		"notifications", "emails", "projects", "tasks", "documents"}
	actions = []string{"read", "create", "update", "delete", "approve"}
)

// seedData returns the seed's roles, each with its permissions, and all
// permissions, everything sorted by id and ids counting from 1.
func seedData() ([]role, []permission) {
	perms := make([]permission, 0, len(resources)*len(actions))
	for _, r := range resources {
		for _, a := range actions {
			perms = append(perms, permission{ID: int64(len(perms) + 1), Name: r + "." + a})
		}
	}
	rng := rand.New(rand.NewPCG(2022, 4))
	roles := make([]role, 0, len(departments)*len(levels))
	for _, d := range departments {
		for _, l := range levels {
			picked := rng.Perm(len(perms))[:minGrants+rng.IntN(maxGrants-minGrants+1)]
			slices.Sort(picked)
			held := make([]permission, len(picked))
			for i, p := range picked {
				held[i] = perms[p]
			}
			roles = append(roles, role{ID: int64(len(roles) + 1), Name: d + "-" + l, Permissions: held})
		}
	}
	return roles, perms
}
