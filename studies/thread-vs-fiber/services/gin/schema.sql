-- The images table of the thread-vs-fiber study. The Gin service embeds this
-- file and the Spring service packages it as its schema.sql, so both create
-- exactly the same table; run at every start, hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS images (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    content_type   TEXT        NOT NULL,
    size           INTEGER     NOT NULL,
    thumbnail_size INTEGER     NOT NULL,
    width          INTEGER     NOT NULL,
    height         INTEGER     NOT NULL,
    original       BYTEA       NOT NULL,
    thumbnail      BYTEA       NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
