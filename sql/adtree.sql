-- AD-trees: cached counts of every conjunction of nominal values.

-- ad_tree_fit (the aggregate making a tree) is generated from the ad_tree
-- declaration, as every learner's is.

-- The number of rows matching every attribute = value pair of conditions (a STRUCT
-- or MAP such as {'humidity': 'high', 'play': 'no'}).
CREATE OR REPLACE TEMP MACRO ad_count(tree, conditions) AS
_dm_ad_count(_dm_model_key(tree), CASE WHEN _dm_model_needed(_dm_model_key(tree)) THEN tree END, conditions);

-- The contingency table of the named columns, counted through an AD-tree: one row
-- per combination of their values, zero counts included.
CREATE OR REPLACE TEMP MACRO ad_counts(tbl, columns, leaf_list_cutoff := 0) AS TABLE
SELECT c.combination, c.count
FROM (SELECT unnest(_dm_ad_counts(_dm_rows, leaf_list_cutoff,
          getvariable('duckmine_ad_tree_max_mb'), getvariable('duckmine_connection'))) AS c
      FROM _dm_fed(tbl, 'ad_counts', 'ad_tree', NULL, columns := columns));
