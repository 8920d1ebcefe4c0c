-- Any relation, or the result of a query, as a relation: a name passes through
-- query_table, anything that reads as a query through query().
CREATE OR REPLACE TEMP MACRO dm_source(tbl) AS TABLE
FROM query(CASE
    WHEN regexp_matches(tbl, '^\s*(select|from|with|values|pivot|unpivot|table|\()', 'i')
    THEN tbl
    ELSE 'FROM query_table(''' || replace(tbl, '''', '''''') || ''')'
END);

-- (t, item) pairs, one per item of every transaction t; a transaction without items
-- gives one row with a NULL item, so that it still counts. The layout is read from
-- the schema (see _dm_layout): long (transaction id, item), a LIST column, or a
-- wide nominal table whose cells are the items "column=value" (a BOOLEAN column is
-- the item "column" where it is true). NULL items are dropped.
CREATE OR REPLACE TEMP MACRO dm_items(tbl, layout := 'auto') AS TABLE
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
),
lists AS (
    SELECT row_number() OVER ()::VARCHAR AS t,
           list_filter(CASE WHEN s.kind = 'list' THEN l[s.a] ELSE list_transform(v, lambda x, j: CASE
               WHEN NOT s.bool[j] THEN s.names[j] || '=' || x
               WHEN x = 'true' THEN s.names[j] END) END, lambda x: x IS NOT NULL) AS items
    FROM rows, spec WHERE s.kind IN ('list', 'wide')
)
SELECT v[s.a] AS t, v[s.b] AS item FROM rows, spec WHERE s.kind = 'long' AND v[s.a] IS NOT NULL
UNION ALL
SELECT t, unnest(CASE WHEN len(items) > 0 THEN items ELSE [NULL] END) FROM lists;

-- The transactions of a relation as one value: item codes per transaction
-- (INTEGER[][]) and the items by code (VARCHAR[], sorted). DuckDB groups the rows
-- into transactions and encodes the items, in parallel next to the data.
CREATE OR REPLACE TEMP MACRO dm_baskets(tbl, layout := 'auto') AS TABLE
WITH pairs AS MATERIALIZED (FROM dm_items(tbl, layout := layout)),
dict AS (
    SELECT item, (row_number() OVER (ORDER BY item) - 1)::INTEGER AS code
    FROM (SELECT DISTINCT item FROM pairs WHERE item IS NOT NULL)
),
tx AS (
    SELECT list(code) FILTER (WHERE code IS NOT NULL) AS codes
    FROM pairs LEFT JOIN dict USING (item) GROUP BY t
)
SELECT (SELECT list(codes) FROM tx) AS tx,
       (SELECT coalesce(list(item ORDER BY code), []) FROM dict) AS items;
