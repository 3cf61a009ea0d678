//! The PostgreSQL schema, as migrations, and the statements of the hot paths.

/// Schema versions, oldest first; version N is the state after `MIGRATIONS[N - 1]`.
pub const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE tenants (
        name TEXT PRIMARY KEY,
        created_ms BIGINT NOT NULL,
        revoked_ms BIGINT,
        max_inboxes BIGINT,
        max_events BIGINT,
        max_bytes BIGINT,
        requests_per_sec DOUBLE PRECISION,
        events BIGINT NOT NULL DEFAULT 0,
        bytes BIGINT NOT NULL DEFAULT 0
    );
    INSERT INTO tenants (name, created_ms) VALUES ('*', 0);
    CREATE TABLE tenant_keys (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL REFERENCES tenants(name),
        hash BYTEA NOT NULL,
        created_ms BIGINT NOT NULL,
        expires_ms BIGINT
    );
    CREATE TABLE inboxes (
        id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        tenant TEXT NOT NULL REFERENCES tenants(name),
        created_ms BIGINT NOT NULL,
        used_ms BIGINT NOT NULL,
        last_seq BIGINT NOT NULL DEFAULT 0,
        held BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX inboxes_tenant ON inboxes(tenant);
    CREATE INDEX inboxes_used ON inboxes(used_ms);
    CREATE TABLE events (
        inbox TEXT NOT NULL REFERENCES inboxes(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        method TEXT NOT NULL,
        query TEXT NOT NULL,
        received_ms BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        PRIMARY KEY (inbox, seq)
    );
    CREATE INDEX events_received ON events(received_ms);
",
    "
    -- Storing a callback and forgetting events are one statement each (one round trip, not
    -- six): the same steps and lock order (inbox, then tenant) as before, inside PostgreSQL.
    CREATE FUNCTION kluis_relay_record(p_inbox TEXT, p_token TEXT, p_method TEXT, p_query TEXT,
        p_now BIGINT, p_max_held BIGINT)
    RETURNS TABLE (r_outcome TEXT, r_tenant TEXT, r_seq BIGINT) LANGUAGE plpgsql AS $$
    DECLARE
        v_token TEXT; v_tenant TEXT; v_held BIGINT; v_seq BIGINT;
        v_bytes BIGINT := octet_length(p_method) + octet_length(p_query);
        t tenants%ROWTYPE;
    BEGIN
        SELECT i.token, i.tenant, i.held INTO v_token, v_tenant, v_held
            FROM inboxes i WHERE i.id = p_inbox FOR UPDATE;
        IF NOT FOUND OR v_token <> p_token THEN
            RETURN QUERY SELECT 'no_inbox'::TEXT, NULL::TEXT, NULL::BIGINT; RETURN;
        END IF;
        IF v_held >= p_max_held THEN
            RETURN QUERY SELECT 'inbox_full'::TEXT, v_tenant, NULL::BIGINT; RETURN;
        END IF;
        SELECT * INTO t FROM tenants WHERE name = v_tenant FOR UPDATE;
        IF t.max_events IS NOT NULL AND t.events >= t.max_events THEN
            RETURN QUERY SELECT 'quota_events'::TEXT, v_tenant, NULL::BIGINT; RETURN;
        END IF;
        IF t.max_bytes IS NOT NULL AND t.bytes + v_bytes > t.max_bytes THEN
            RETURN QUERY SELECT 'quota_bytes'::TEXT, v_tenant, NULL::BIGINT; RETURN;
        END IF;
        UPDATE inboxes SET last_seq = last_seq + 1, held = held + 1, used_ms = p_now
            WHERE id = p_inbox RETURNING last_seq INTO v_seq;
        INSERT INTO events (inbox, seq, method, query, received_ms, bytes)
            VALUES (p_inbox, v_seq, p_method, p_query, p_now, v_bytes);
        UPDATE tenants SET events = events + 1, bytes = bytes + v_bytes WHERE name = v_tenant;
        PERFORM pg_notify('kluis_relay', p_inbox);
        RETURN QUERY SELECT 'stored'::TEXT, v_tenant, v_seq;
    END $$;

    -- Forgets the events of p_tenant's p_inbox numbered up to p_up_to or received before
    -- p_before, keeping the totals, and with p_drop the inbox itself; only an inbox unused
    -- since p_idle_before (expiry: it may have been used since it was listed). How many
    -- events, or NULL when there is no such inbox.
    CREATE FUNCTION kluis_relay_forget(p_tenant TEXT, p_inbox TEXT, p_up_to BIGINT,
        p_before BIGINT, p_drop BOOLEAN, p_idle_before BIGINT)
    RETURNS BIGINT LANGUAGE plpgsql AS $$
    DECLARE v_count BIGINT; v_bytes BIGINT;
    BEGIN
        PERFORM 1 FROM inboxes
            WHERE id = p_inbox AND tenant = p_tenant AND used_ms < p_idle_before FOR UPDATE;
        IF NOT FOUND THEN RETURN NULL; END IF;
        WITH gone AS (
            DELETE FROM events WHERE inbox = p_inbox AND (seq <= p_up_to OR received_ms < p_before)
            RETURNING bytes
        ) SELECT COUNT(*), COALESCE(SUM(bytes), 0) INTO v_count, v_bytes FROM gone;
        IF v_count > 0 THEN
            UPDATE inboxes SET held = GREATEST(held - v_count, 0) WHERE id = p_inbox;
            UPDATE tenants SET events = GREATEST(events - v_count, 0),
                bytes = GREATEST(bytes - v_bytes, 0) WHERE name = p_tenant;
        END IF;
        IF p_drop THEN DELETE FROM inboxes WHERE id = p_inbox; END IF;
        RETURN v_count;
    END $$;
",
    "
    -- The callback's token is compared here, not first by the relay in a query of its own: one
    -- round trip per callback instead of two. Comparing the SHA-256 digests rather than the
    -- tokens keeps the comparison's time independent of how much of a guessed token is right.
    -- The NOTIFY is no longer sent here but after the commit (NOTIFY_STORED): a transaction
    -- that notifies takes one database-wide lock at commit, and held it while it held the
    -- inbox's and the tenant's rows, so every callback of a tenant queued behind every commit.
    CREATE OR REPLACE FUNCTION kluis_relay_record(p_inbox TEXT, p_token TEXT, p_method TEXT,
        p_query TEXT, p_now BIGINT, p_max_held BIGINT)
    RETURNS TABLE (r_outcome TEXT, r_tenant TEXT, r_seq BIGINT) LANGUAGE plpgsql AS $$
    DECLARE
        v_token TEXT; v_tenant TEXT; v_held BIGINT; v_seq BIGINT;
        v_bytes BIGINT := octet_length(p_method) + octet_length(p_query);
        t tenants%ROWTYPE;
    BEGIN
        SELECT i.token, i.tenant, i.held INTO v_token, v_tenant, v_held
            FROM inboxes i WHERE i.id = p_inbox FOR UPDATE;
        IF NOT FOUND
            OR sha256(convert_to(v_token, 'UTF8')) <> sha256(convert_to(p_token, 'UTF8')) THEN
            RETURN QUERY SELECT 'no_inbox'::TEXT, NULL::TEXT, NULL::BIGINT; RETURN;
        END IF;
        IF v_held >= p_max_held THEN
            RETURN QUERY SELECT 'inbox_full'::TEXT, v_tenant, NULL::BIGINT; RETURN;
        END IF;
        SELECT * INTO t FROM tenants WHERE name = v_tenant FOR UPDATE;
        IF t.max_events IS NOT NULL AND t.events >= t.max_events THEN
            RETURN QUERY SELECT 'quota_events'::TEXT, v_tenant, NULL::BIGINT; RETURN;
        END IF;
        IF t.max_bytes IS NOT NULL AND t.bytes + v_bytes > t.max_bytes THEN
            RETURN QUERY SELECT 'quota_bytes'::TEXT, v_tenant, NULL::BIGINT; RETURN;
        END IF;
        UPDATE inboxes SET last_seq = last_seq + 1, held = held + 1, used_ms = p_now
            WHERE id = p_inbox RETURNING last_seq INTO v_seq;
        INSERT INTO events (inbox, seq, method, query, received_ms, bytes)
            VALUES (p_inbox, v_seq, p_method, p_query, p_now, v_bytes);
        UPDATE tenants SET events = events + 1, bytes = bytes + v_bytes WHERE name = v_tenant;
        RETURN QUERY SELECT 'stored'::TEXT, v_tenant, v_seq;
    END $$;
",
    "
    -- The relay's own keys (the callback tokens' HMAC key), made by the first instance that
    -- needs one.
    CREATE TABLE kluis_relay_keys (
        name TEXT PRIMARY KEY,
        key BYTEA NOT NULL
    );
",
    "
    -- The office hub (`storage::office`): PC keys, and each klant's office-wide turn, whose
    -- times are this database's clock (`clock_timestamp()`), never a PC's.
    ALTER TABLE tenant_keys ADD COLUMN pc TEXT;
    CREATE INDEX tenant_keys_pc ON tenant_keys(tenant, pc);
    CREATE TABLE office_turns (
        tenant TEXT NOT NULL REFERENCES tenants(name),
        klant TEXT NOT NULL,
        holder TEXT,
        held_until_ms BIGINT,
        done_by TEXT,
        done_ms BIGINT,
        PRIMARY KEY (tenant, klant)
    );
",
    "
    -- Each office PC's last report, sealed with the office key (`storage::office`); when it
    -- came is this database's clock.
    CREATE TABLE office_reports (
        tenant TEXT NOT NULL REFERENCES tenants(name),
        pc TEXT NOT NULL,
        at_ms BIGINT NOT NULL,
        sealed BYTEA NOT NULL,
        PRIMARY KEY (tenant, pc)
    );
",
    "
    -- Invitations of new PCs to an office (`storage::office`): each one's enrolment token as
    -- its SHA-256; expiry by this database's clock.
    CREATE TABLE office_invites (
        token_hash BYTEA PRIMARY KEY,
        tenant TEXT NOT NULL REFERENCES tenants(name),
        pc TEXT NOT NULL,
        made_by TEXT NOT NULL,
        expires_ms BIGINT NOT NULL
    );
    CREATE INDEX office_invites_tenant ON office_invites(tenant, pc);
",
    "
    -- Each office's office key check value (`storage::office`), set by its first PC.
    CREATE TABLE office_key_checks (
        tenant TEXT PRIMARY KEY REFERENCES tenants(name),
        check_value BYTEA NOT NULL,
        set_ms BIGINT NOT NULL
    );
",
    "
    -- The PCs that checked the office key and were told it is the office's
    -- (`storage::office`): the check counts while one of them has a working key.
    CREATE TABLE office_key_checkers (
        tenant TEXT NOT NULL REFERENCES tenants(name),
        pc TEXT NOT NULL,
        PRIMARY KEY (tenant, pc)
    );
",
];

/// The statements of the hot paths, prepared on every connection of the pool by
/// [`PgStore::warm_all`].
pub const RECORD: &str = "SELECT * FROM kluis_relay_record($1, $2, $3, $4, $5, $6)";
/// Wakes the long-polls of an inbox at every instance, once its callback is committed.
pub const NOTIFY_STORED: &str = "SELECT pg_notify('kluis_relay', $1)";
pub const FORGET: &str = "SELECT kluis_relay_forget($1, $2, $3, $4, $5, $6)";
pub const KEY: &str = "SELECT k.tenant, k.hash, k.expires_ms, t.revoked_ms IS NOT NULL,
        t.max_inboxes, t.max_events, t.max_bytes, t.requests_per_sec, k.pc
     FROM tenant_keys k JOIN tenants t ON t.name = k.tenant WHERE k.id = $1";
/// Events after a cursor in one statement: no row when the tenant has no such inbox, one row
/// without an event when it has none after the cursor.
pub const EVENTS_AFTER: &str = "SELECT e.seq, e.method, e.query, e.received_ms FROM inboxes i
     LEFT JOIN LATERAL (
         SELECT seq, method, query, received_ms FROM events
         WHERE inbox = i.id AND seq > $3 ORDER BY seq LIMIT $4
     ) e ON true
     WHERE i.id = $1 AND i.tenant = $2";
