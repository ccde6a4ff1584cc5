-- Roles and permissions of the RBAC service. Ids are given by the seed and
-- never by the API, which creates no rows in roles or permissions.
CREATE TABLE IF NOT EXISTS roles (
    id   bigint PRIMARY KEY,
    name text   NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 200)
);

CREATE TABLE IF NOT EXISTS permissions (
    id   bigint PRIMARY KEY,
    name text   NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 200)
);

CREATE TABLE IF NOT EXISTS role_permissions (
    role_id       bigint NOT NULL REFERENCES roles (id),
    permission_id bigint NOT NULL REFERENCES permissions (id),
    PRIMARY KEY (role_id, permission_id)
);

-- data_version is bumped in the transaction of every mutation and travels
-- with every cached copy, so an answer's X-Data-Version tells whether it
-- was stale. One row: the boolean key can only be true.
CREATE TABLE IF NOT EXISTS data_version (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    version bigint  NOT NULL
);
INSERT INTO data_version (version) VALUES (1) ON CONFLICT DO NOTHING;
