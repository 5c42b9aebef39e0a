package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// postgresMigrations are the schema's versions, in order; version n is
// postgresMigrations[n-1]. They mirror SQLite's tables (sqlite.go,
// sqlite_payments.go): time columns are timestamptz, category counts jsonb.
// A migration once released is never edited: a change is a new one.
var postgresMigrations = []string{
	`CREATE TABLE ledger (
		id              bigserial   PRIMARY KEY,
		payer           text        NOT NULL,
		time            timestamptz NOT NULL,
		price           bigint      NOT NULL,
		verdict         text        NOT NULL,
		category_counts jsonb       NOT NULL
	);
	CREATE INDEX ledger_time ON ledger (time);
	CREATE TABLE precheck (
		caller  text   PRIMARY KEY,
		day     text   NOT NULL,
		count   bigint NOT NULL,
		last_ms bigint NOT NULL
	);
	CREATE INDEX precheck_last ON precheck (last_ms);
	CREATE TABLE payments (
		key         text        PRIMARY KEY,
		reserved_at timestamptz NOT NULL,
		state       text        NOT NULL,
		ident       text        UNIQUE,
		payer       text        NOT NULL,
		tx          text        NOT NULL
	);
	CREATE TABLE inflight (
		key             text        PRIMARY KEY,
		ident           text        UNIQUE,
		state           text        NOT NULL,
		header          text        NOT NULL,
		accepted        text        NOT NULL,
		payer           text        NOT NULL,
		price           bigint      NOT NULL,
		verdict         text        NOT NULL,
		category_counts jsonb       NOT NULL,
		tx              text        NOT NULL,
		since           timestamptz NOT NULL,
		owner           text        NOT NULL
	);
	CREATE TABLE servers (
		id   text        PRIMARY KEY,
		seen timestamptz NOT NULL
	);`,
}

// postgresMigrateLock is the advisory lock key under which servers starting
// at once migrate one after the other.
const postgresMigrateLock = 0x7072_6f6d_7074 // "prompt"

// migrate brings the schema to the newest version. The whole migration is
// one transaction under an advisory lock: of servers starting together one
// migrates, the others then find the schema current.
func (s *PostgreSQL) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store: migrating the postgres schema: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(postgresMigrateLock)); err != nil {
		return fmt.Errorf("store: migrating the postgres schema: %w", err)
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS promptwall_schema (version int NOT NULL)"); err != nil {
		return fmt.Errorf("store: migrating the postgres schema: %w", err)
	}
	var version int
	err = tx.QueryRow(ctx, "SELECT version FROM promptwall_schema").Scan(&version)
	switch {
	case err == pgx.ErrNoRows:
		if _, err := tx.Exec(ctx, "INSERT INTO promptwall_schema (version) VALUES (0)"); err != nil {
			return fmt.Errorf("store: migrating the postgres schema: %w", err)
		}
	case err != nil:
		return fmt.Errorf("store: migrating the postgres schema: %w", err)
	}
	if version > len(postgresMigrations) {
		return fmt.Errorf("store: the postgres schema has version %d, newer than this server knows (%d)", version, len(postgresMigrations))
	}
	for v := version; v < len(postgresMigrations); v++ {
		if _, err := tx.Exec(ctx, postgresMigrations[v]); err != nil {
			return fmt.Errorf("store: migrating the postgres schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, "UPDATE promptwall_schema SET version = $1", len(postgresMigrations)); err != nil {
		return fmt.Errorf("store: migrating the postgres schema: %w", err)
	}
	return tx.Commit(ctx)
}
