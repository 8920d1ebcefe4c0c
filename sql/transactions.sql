-- Whether tbl is a query written in parentheses rather than a name.
CREATE OR REPLACE TEMP MACRO _dm_is_query(tbl) AS regexp_matches(tbl, '^\s*\(');

-- The relation tbl names, or the result of a query written in parentheses.
-- tbl is a name (schema-qualified, quoted, with spaces or unicode: whatever
-- query_table reads), so a table may be called select or values; a query is
-- '(SELECT ...)'. Text that reads as a bare query (a leading keyword and more, or
-- a comment) or as a table function call is refused naming fn, with both forms.
CREATE OR REPLACE TEMP MACRO _dm_source(tbl, fn) AS TABLE
FROM query(CASE
    WHEN tbl IS NULL THEN error(fn || ': tbl must be a table name, got NULL')
    WHEN _dm_is_query(tbl) THEN tbl
    WHEN regexp_matches(tbl, '^\s*((select|from|with|values|pivot|unpivot|table|summarize|describe|show)(\s|\()|--|/\*)', 'i')
    THEN error(fn || ': tbl is a table name, and ''' || tbl || ''' reads as a query; '
               || 'write a query in parentheses, as ''(' || trim(tbl) || ')'', and a '
               || 'table with such a name in double quotes')
    WHEN regexp_matches(tbl, '^\s*[A-Za-z_][A-Za-z0-9_]*\s*\(')
    THEN error(fn || ': tbl is a table name, and ''' || tbl || ''' reads as a table '
               || 'function call; write it as a query in parentheses, as ''(FROM '
               || trim(tbl) || ')''')
    ELSE 'FROM query_table(''' || replace(tbl, '''', '''''') || ''')'
END);

-- The engine settings a fit reads (NULL fields: defaults).
CREATE OR REPLACE TEMP MACRO _dm_settings() AS
{'max_values': getvariable('duckmine_max_nominal_values'),
 'memory_limit': coalesce(getvariable('duckmine_memory_limit')::VARCHAR,
                          current_setting('memory_limit')),
 'ad_tree_max_mb': getvariable('duckmine_ad_tree_max_mb')};

-- The relation's rows fed to a fit of learner as DuckDB scans them (udfs/feed.py):
-- one row, {job, rows}, for the fit to take them from. Each row goes as {n, row},
-- packed from its columns (rather than named by an alias, which a column of the
-- same name would hide) and numbered in the relation's order (row_number() OVER ()
-- keeps the scan order, streaming), so a table gives the same model every time, as
-- its file would. Only the named columns are read, where columns is not NULL. The
-- job is its connection's (duckmine_connection, set by load: DuckDB numbers
-- connections and transactions per database, so those numbers repeat across
-- databases) and its transaction's. A table (or view) named is counted first, so
-- that its rows are written straight to their places in a matrix of their number
-- (a base table's count is its metadata); a query in parentheses is not run twice,
-- and its rows go to a matrix that grows.
CREATE OR REPLACE TEMP MACRO _dm_open_job(tbl, fn, learner, weight, columns, group_by) AS
_dm_job(fn, learner, weight, columns, _dm_settings(), getvariable('duckmine_connection'),
        txid_current(),
        (SELECT count(*) FROM _dm_source(
            CASE WHEN _dm_is_query(tbl) THEN '(SELECT 1 WHERE false)' ELSE tbl END, fn)),
        group_by);

CREATE OR REPLACE TEMP MACRO _dm_fed(tbl, fn, learner, weight, columns := NULL) AS TABLE
WITH job AS MATERIALIZED (
    SELECT _dm_open_job(tbl, fn, learner, weight, columns, NULL) AS id),
numbered AS (
    SELECT {'n': row_number() OVER (), 'row': struct_pack(*COLUMNS(*))} AS r
    FROM _dm_source(tbl, fn))
SELECT {'job': (SELECT id FROM job), 'rows': count(_dm_feed(job.id, numbered.r))} AS _dm_rows
FROM numbered, job;

-- The same, the rows grouped by the column group_by as GROUP BY groups them, in
-- one scan: a row per group, with the group's value under the column's own name and
-- type, the number of its first row (_dm_first) and its count of rows (_dm_count),
-- and the job (_dm_job) whose rows are fed as in _dm_fed and read each one's group
-- from the column. A column _dm_pad (NULL) stands in for group_by where the table
-- has no such column, so that the query binds and the job names the column missing.
CREATE OR REPLACE TEMP MACRO _dm_fed_groups(tbl, learner, weight, group_by) AS TABLE
WITH job AS MATERIALIZED (
    SELECT _dm_open_job(tbl, 'fit_groups', learner, weight, NULL, group_by) AS id),
numbered AS (
    SELECT row_number() OVER () AS _dm_n, _dm_row,
           COLUMNS(lambda c: lower(c) = lower(group_by::VARCHAR) OR c = '_dm_pad')
    FROM (SELECT struct_pack(*COLUMNS(*)) AS _dm_row, NULL AS _dm_pad, *
          FROM _dm_source(tbl, 'fit_groups')))
SELECT COLUMNS(lambda c: lower(c) = lower(group_by::VARCHAR) OR c = '_dm_pad'),
       min(_dm_n) AS _dm_first,
       count(_dm_feed(job.id, {'n': _dm_n, 'row': _dm_row})) AS _dm_count,
       any_value(job.id) AS _dm_job
FROM numbered, job GROUP BY ALL;

-- The transactions of a relation as one value: the item codes of each transaction
-- (INTEGER[][]) and the items by code (VARCHAR[], sorted). DuckDB groups the rows
-- into transactions and encodes the items, in parallel next to the data.
--
-- The layout is read from the schema (see _dm_layout): long (transaction id, item),
-- a LIST column, or a wide nominal table whose cells are the items "column=value"
-- (a BOOLEAN column is the item "column" where it is true). NULL items are
-- dropped; a transaction without items still counts (an empty list).
CREATE OR REPLACE TEMP MACRO _dm_baskets(tbl, fn, layout := 'auto') AS TABLE
WITH src AS (FROM _dm_source(tbl, fn)),
-- a NULL column after the others, so that #2 exists whatever the table
padded AS (SELECT *, NULL::VARCHAR AS _dm_pad FROM src),
spec AS (
    SELECT _dm_layout(n.names, t.types, layout, fn) AS _dm_s
    FROM (SELECT list_value(*COLUMNS(*)) AS names
          FROM (SELECT alias(COLUMNS(s.*)) FROM (SELECT 1) o LEFT JOIN (FROM src LIMIT 1) s ON true)) n,
         (SELECT list_value(*COLUMNS(*)) AS types
          FROM (SELECT typeof(COLUMNS(s.*)) FROM (SELECT 1) o LEFT JOIN (FROM src LIMIT 1) s ON true)) t
),
-- the long layout reads its two columns as they are: #1 keeps the transaction
-- id's own type
long_pairs AS (
    SELECT #1 AS t, #2::VARCHAR AS item FROM padded
    WHERE (SELECT _dm_s.kind FROM spec) = 'long' AND #1 IS NOT NULL
),
-- the list layout: every row's columns as lists (NULL where a column is no list)
list_rows AS (
    SELECT list_value(*COLUMNS(*)) AS l
    FROM (SELECT TRY_CAST(COLUMNS(*) AS VARCHAR[]) FROM src
          WHERE (SELECT _dm_s.kind FROM spec) = 'list')
),
-- the wide layout: every row's columns as VARCHARs
wide_rows AS (
    SELECT list_value(*COLUMNS(*)) AS v
    FROM (SELECT COLUMNS(*)::VARCHAR FROM src WHERE (SELECT _dm_s.kind FROM spec) = 'wide')
),
row_pairs AS (
    SELECT t, unnest(CASE WHEN len(items) > 0 THEN items ELSE [NULL] END) AS item
    FROM (SELECT row_number() OVER () AS t,
                 list_filter(l[_dm_s.list_column], lambda x: x IS NOT NULL) AS items
          FROM list_rows, spec
          UNION ALL
          SELECT row_number() OVER (),
                 list_filter(list_transform(v, lambda x, j: CASE
                                 WHEN NOT _dm_s.bool[j] THEN _dm_s.names[j] || '=' || x
                                 WHEN x = 'true' THEN _dm_s.names[j] END),
                             lambda x: x IS NOT NULL)
          FROM wide_rows, spec)
),
-- the pairs of whichever layout, in one relation that the dictionary and the
-- transactions both read: when each read the layouts' pairs apart, DuckDB kept the
-- list and wide layouts' pairs as a relation of their own, and built it by casting
-- every row of a long table, only to filter them all out (0.11 s of 0.18 s at
-- 1,000,000 rows)
pairs AS MATERIALIZED (
    SELECT t AS t_long, NULL::BIGINT AS t_row, item FROM long_pairs
    UNION ALL
    SELECT NULL, t, item FROM row_pairs
),
dict AS (
    SELECT item, (row_number() OVER (ORDER BY item) - 1)::INTEGER AS code
    FROM (SELECT DISTINCT item FROM pairs WHERE item IS NOT NULL)
),
tx AS (
    SELECT list(code) FILTER (WHERE code IS NOT NULL) AS codes
    FROM pairs LEFT JOIN dict USING (item) GROUP BY t_long, t_row
)
SELECT (SELECT list(codes) FROM tx) AS tx,
       (SELECT coalesce(list(item ORDER BY code), []) FROM dict) AS items;
