package main

import (
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	base := map[string]string{
		"ADDR":         "127.0.0.1:9001",
		"DATABASE_URL": "postgres://u:p@127.0.0.1:5432/rbac",
		"REDIS_URL":    "redis://127.0.0.1:6379/0",
		"STRATEGY":     "redis",
		"INSTANCE":     "",
		"CACHE_TTL":    "",
		"SINGLEFLIGHT": "",
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    config
		wantErr string
	}{
		{name: "defaults", want: config{addr: "127.0.0.1:9001", databaseURL: base["DATABASE_URL"],
			redisURL: base["REDIS_URL"], strategy: strategyRedis, instance: "9001", ttl: defaultTTL}},
		{name: "all-set", env: map[string]string{"INSTANCE": "b", "CACHE_TTL": "2s", "SINGLEFLIGHT": "1", "STRATEGY": "inproc-pubsub"},
			want: config{addr: "127.0.0.1:9001", databaseURL: base["DATABASE_URL"], redisURL: base["REDIS_URL"],
				strategy: strategyInprocPubsub, instance: "b", ttl: 2 * time.Second, singleflight: true}},
		{name: "db-needs-no-redis", env: map[string]string{"STRATEGY": "db", "REDIS_URL": ""},
			want: config{addr: "127.0.0.1:9001", databaseURL: base["DATABASE_URL"], strategy: strategyDB, instance: "9001", ttl: defaultTTL}},
		{name: "unknown-strategy", env: map[string]string{"STRATEGY": "memcached"}, wantErr: "want db, redis"},
		{name: "redis-without-url", env: map[string]string{"REDIS_URL": ""}, wantErr: "needs REDIS_URL"},
		{name: "pubsub-without-url", env: map[string]string{"STRATEGY": "inproc-pubsub", "REDIS_URL": ""}, wantErr: "needs REDIS_URL"},
		{name: "no-database", env: map[string]string{"DATABASE_URL": ""}, wantErr: "DATABASE_URL"},
		{name: "public-addr", env: map[string]string{"ADDR": "0.0.0.0:9001"}, wantErr: "loopback"},
		{name: "bad-ttl", env: map[string]string{"CACHE_TTL": "60"}, wantErr: "CACHE_TTL"},
		{name: "zero-ttl", env: map[string]string{"CACHE_TTL": "0s"}, wantErr: "CACHE_TTL"},
		{name: "bad-singleflight", env: map[string]string{"SINGLEFLIGHT": "yes"}, wantErr: "SINGLEFLIGHT"},
		{name: "singleflight-without-cache", env: map[string]string{"STRATEGY": "db", "SINGLEFLIGHT": "1"}, wantErr: "no cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range base {
				if o, ok := tc.env[k]; ok {
					v = o
				}
				t.Setenv(k, v)
			}
			got, err := configFromEnv()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
