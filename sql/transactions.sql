-- Any relation, or the result of a query, as a relation: a name passes through
-- query_table, anything that reads as a query through query().
CREATE OR REPLACE TEMP MACRO dm_source(tbl) AS TABLE
FROM query(CASE
    WHEN regexp_matches(tbl, '^\s*(select|from|with|values|pivot|unpivot|table|\()', 'i')
    THEN tbl
    ELSE 'FROM query_table(''' || replace(tbl, '''', '''''') || ''')'
END);

-- One row per transaction: items VARCHAR[] (NULL items dropped). The layout is
-- read from the schema (see _dm_layout): long (transaction id, item), a LIST
-- column, or a wide nominal table whose cells are the items "column=value"
-- (a BOOLEAN column is the item "column" where it is true).
CREATE OR REPLACE TEMP MACRO dm_transactions(tbl, layout := 'auto') AS TABLE
WITH src AS (FROM dm_source(tbl)),
spec AS (
    SELECT _dm_layout(n.names, t.types, layout) AS s
    FROM (SELECT list_value(*COLUMNS(*)) AS names
          FROM (SELECT alias(COLUMNS(s.*)) FROM (SELECT 1) o LEFT JOIN (FROM src LIMIT 1) s ON true)) n,
         (SELECT list_value(*COLUMNS(*)) AS types
          FROM (SELECT typeof(COLUMNS(s.*)) FROM (SELECT 1) o LEFT JOIN (FROM src LIMIT 1) s ON true)) t
),
rows AS (
    SELECT list_value(*COLUMNS('^v_')) AS v, list_value(*COLUMNS('^l_')) AS l
    FROM (SELECT COLUMNS(*)::VARCHAR AS 'v_\0', TRY_CAST(COLUMNS(*) AS VARCHAR[]) AS 'l_\0' FROM src)
)
SELECT list(v[s.b]) FILTER (WHERE v[s.b] IS NOT NULL) AS items
FROM rows, spec WHERE s.kind = 'long' AND v[s.a] IS NOT NULL GROUP BY v[s.a]
UNION ALL
SELECT list_filter(l[s.a], lambda x: x IS NOT NULL) FROM rows, spec WHERE s.kind = 'list'
UNION ALL
SELECT list_filter(list_transform(v, lambda x, j: CASE
           WHEN NOT s.bool[j] THEN s.names[j] || '=' || x
           WHEN x = 'true' THEN s.names[j] END), lambda x: x IS NOT NULL)
FROM rows, spec WHERE s.kind = 'wide';
