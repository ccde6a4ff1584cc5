package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// store is the images table (schema.sql).
type store struct {
	pool *pgxpool.Pool
}

// newImage is an image ready to store: the upload and its thumbnail.
type newImage struct {
	contentType   string
	width, height int
	original      []byte
	thumbnail     []byte
}

// storedBytes are stored bytes and the content type to serve them with.
type storedBytes struct {
	contentType string
	data        []byte
}

// errNoImage is returned by the fetches for an unknown id.
var errNoImage = errors.New("no such image")

// insert stores original and thumbnail in one transaction, as the Spring
// service's @Transactional insert does, and returns the new id.
func (s *store) insert(ctx context.Context, img newImage) (int64, error) {
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `
			INSERT INTO images (content_type, size, thumbnail_size, width, height, original, thumbnail)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			RETURNING id`,
			img.contentType, len(img.original), len(img.thumbnail), img.width, img.height,
			img.original, img.thumbnail).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("insert image: %w", err)
	}
	return id, nil
}

func (s *store) original(ctx context.Context, id int64) (storedBytes, error) {
	return s.fetch(ctx, "SELECT content_type, original FROM images WHERE id = $1", id)
}

func (s *store) thumbnail(ctx context.Context, id int64) (storedBytes, error) {
	return s.fetch(ctx, "SELECT content_type, thumbnail FROM images WHERE id = $1", id)
}

func (s *store) fetch(ctx context.Context, query string, id int64) (storedBytes, error) {
	var b storedBytes
	err := s.pool.QueryRow(ctx, query, id).Scan(&b.contentType, &b.data)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, errNoImage
	}
	if err != nil {
		return b, fmt.Errorf("fetch image %d: %w", id, err)
	}
	return b, nil
}
