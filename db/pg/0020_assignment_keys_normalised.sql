-- Invoice numbers in the assignment index are compared without case and with runs of spaces as one
-- (src/features/finance/assignment-key.ts): the keys of invoices still held are rewritten that way.
-- Where two held invoices are one under the new rule (both assigned before it), the older keeps the
-- key and the other its old one: both stay held, nothing is dropped, no unique index is broken.
-- normalize() needs PostgreSQL 13+ and a UTF8 database; elsewhere the keys are only cased and spaced.
DO $$
DECLARE
  num text := CASE WHEN current_setting('server_version_num')::int >= 130000 AND current_setting('server_encoding') = 'UTF8' THEN 'normalize(number, NFKC)' ELSE 'number' END;
BEGIN
  EXECUTE format($sql$
    WITH normalised AS (
      SELECT id, tenant_id, env, issuer_nif || '|' || upper(btrim(regexp_replace(%1$s, '[[:space:]]+', ' ', 'g'))) AS k
      FROM assigned_invoices WHERE assignment_key IS NOT NULL
    ), ranked AS (
      SELECT n.*, row_number() OVER (PARTITION BY n.tenant_id, n.env, n.k ORDER BY a.created_at, a.id) AS rn
      FROM normalised n JOIN assigned_invoices a ON a.id = n.id
    )
    UPDATE assigned_invoices a SET assignment_key = r.k FROM ranked r
    WHERE a.id = r.id AND r.rn = 1 AND a.assignment_key <> r.k
      AND NOT EXISTS (SELECT 1 FROM assigned_invoices b WHERE b.tenant_id = a.tenant_id AND b.env = a.env AND b.assignment_key = r.k AND b.id <> a.id)
  $sql$, num);
END $$;
