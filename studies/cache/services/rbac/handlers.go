package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/msbench/msbench/studies/cache/services/internal/web"
)

// server answers the API described in README.md.
type server struct {
	store    *store
	reads    *reads
	stats    *stats
	instance string
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	// Readiness only: touches neither Postgres nor Redis.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		web.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		web.JSON(w, http.StatusOK, s.stats.json())
	})
	mux.HandleFunc("POST /stats/reset", func(w http.ResponseWriter, _ *http.Request) {
		s.stats.reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.Handle("GET /roles", s.api(s.listRoles))
	mux.Handle("GET /roles/{id}", s.api(s.getRole))
	mux.Handle("PATCH /roles/{id}", s.api(s.rename))
	mux.Handle("POST /roles/{id}/permissions", s.api(s.grant))
	mux.Handle("DELETE /roles/{id}/permissions/{pid}", s.api(s.revoke))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Instance", s.instance)
		mux.ServeHTTP(w, r)
	})
}

// apiFunc handles an API request; it answers itself on success and returns
// the error otherwise.
type apiFunc func(w http.ResponseWriter, r *http.Request, tm *timing) error

// api counts the request, times it for Server-Timing and answers errors.
func (s *server) api(h apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.stats.requests.Add(1)
		tm := &timing{start: time.Now()}
		tw := &timedWriter{ResponseWriter: w, t: tm}
		if err := h(tw, r, tm); err != nil {
			fail(tw, err)
		}
	})
}

func (s *server) listRoles(w http.ResponseWriter, r *http.Request, tm *timing) error {
	snap, err := s.read(w, r, tm)
	if err != nil {
		return err
	}
	web.JSON(w, http.StatusOK, snap.Roles)
	return nil
}

func (s *server) getRole(w http.ResponseWriter, r *http.Request, tm *timing) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	snap, err := s.read(w, r, tm)
	if err != nil {
		return err
	}
	role, ok := snap.role(id)
	if !ok {
		return fmt.Errorf("role %d: %w", id, errNoRole)
	}
	web.JSON(w, http.StatusOK, role)
	return nil
}

// read gets the snapshot and sets the headers that say where it came from
// and which data version it is.
func (s *server) read(w http.ResponseWriter, r *http.Request, tm *timing) (*snapshot, error) {
	snap, cacheStatus, err := s.reads.snapshot(r.Context(), tm)
	w.Header().Set("X-Cache", cacheStatus)
	if err != nil {
		return nil, err
	}
	w.Header().Set("X-Data-Version", strconv.FormatInt(snap.Version, 10))
	return snap, nil
}

func (s *server) grant(w http.ResponseWriter, r *http.Request, tm *timing) error {
	roleID, err := pathID(r, "id")
	if err != nil {
		return err
	}
	permID, err := decodeGrant(w, r)
	if err != nil {
		return err
	}
	if err := s.mutate(w, r, tm, func(ctx context.Context) (int64, error) {
		return s.store.grant(ctx, roleID, permID)
	}); err != nil {
		return err
	}
	web.JSON(w, http.StatusOK, map[string]int64{"role_id": roleID, "permission_id": permID})
	return nil
}

func (s *server) revoke(w http.ResponseWriter, r *http.Request, tm *timing) error {
	roleID, err := pathID(r, "id")
	if err != nil {
		return err
	}
	permID, err := pathID(r, "pid")
	if err != nil {
		return err
	}
	if err := s.mutate(w, r, tm, func(ctx context.Context) (int64, error) {
		return s.store.revoke(ctx, roleID, permID)
	}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) rename(w http.ResponseWriter, r *http.Request, tm *timing) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	name, err := decodeRename(w, r)
	if err != nil {
		return err
	}
	if err := s.mutate(w, r, tm, func(ctx context.Context) (int64, error) {
		return s.store.rename(ctx, id, name)
	}); err != nil {
		return err
	}
	web.JSON(w, http.StatusOK, struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}{id, name})
	return nil
}

// mutate runs a store mutation, invalidates the cache and sets
// X-Data-Version. It carries on if the client leaves: a commit must not go
// without its invalidation.
func (s *server) mutate(w http.ResponseWriter, r *http.Request, tm *timing, change func(context.Context) (int64, error)) error {
	ctx := context.WithoutCancel(r.Context())
	stop := tm.stage("db")
	version, err := change(ctx)
	stop()
	if err == nil || mayHaveCommitted(err) {
		// A needless miss costs less than a stale copy.
		s.reads.invalidate(ctx, tm)
	}
	if err != nil {
		return err
	}
	w.Header().Set("X-Data-Version", strconv.FormatInt(version, 10))
	return nil
}

// fail answers err with the status that tells the client what went wrong.
func fail(w http.ResponseWriter, err error) {
	var ae *apiError
	switch {
	case errors.Is(err, context.Canceled):
		// The client left mid-read: nobody to answer, nothing went wrong.
	case errors.As(err, &ae):
		web.Error(w, ae.status, ae.reason)
	case errors.Is(err, errNoRole), errors.Is(err, errNoPermission):
		web.Error(w, http.StatusNotFound, err.Error())
	case errors.Is(err, errNameTaken):
		web.Error(w, http.StatusConflict, err.Error())
	case unavailable(err):
		web.Error(w, http.StatusServiceUnavailable, "database unavailable: "+err.Error())
	default:
		log.Printf("internal error: %v", err)
		web.Error(w, http.StatusInternalServerError, err.Error())
	}
}
