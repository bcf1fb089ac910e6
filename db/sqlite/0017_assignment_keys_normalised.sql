-- Invoice numbers in the assignment index are compared without case and with runs of spaces as one
-- (src/features/finance/assignment-key.ts): the keys of invoices still held are rewritten that way
-- (no-break spaces, tabs and line breaks as spaces; runs of up to 16 spaces as one; ASCII upper
-- case, which is what invoice numbers use). Where two held invoices are one under the new rule, the
-- older keeps the key and the other its old one: both stay held, no unique index is broken.
WITH spaced AS (
  SELECT id, tenant_id, env, created_at,
    replace(replace(replace(replace(number, char(160), ' '), char(9), ' '), char(10), ' '), char(13), ' ') AS s
  FROM assigned_invoices WHERE assignment_key IS NOT NULL
), normalised AS (
  SELECT id, tenant_id, env, created_at,
    upper(trim(replace(replace(replace(replace(s, '  ', ' '), '  ', ' '), '  ', ' '), '  ', ' '))) AS n
  FROM spaced
), ranked AS (
  SELECT n.id, n.tenant_id, n.env, a.issuer_nif || '|' || n.n AS k,
    row_number() OVER (PARTITION BY n.tenant_id, n.env, a.issuer_nif || '|' || n.n ORDER BY n.created_at, n.id) AS rn
  FROM normalised n JOIN assigned_invoices a ON a.id = n.id
)
UPDATE assigned_invoices SET assignment_key = (SELECT k FROM ranked WHERE ranked.id = assigned_invoices.id)
WHERE id IN (SELECT r.id FROM ranked r WHERE r.rn = 1)
  AND assignment_key <> (SELECT k FROM ranked WHERE ranked.id = assigned_invoices.id)
  AND NOT EXISTS (
    SELECT 1 FROM assigned_invoices b
    WHERE b.tenant_id = assigned_invoices.tenant_id AND b.env = assigned_invoices.env AND b.id <> assigned_invoices.id
      AND b.assignment_key = (SELECT k FROM ranked WHERE ranked.id = assigned_invoices.id)
  );
